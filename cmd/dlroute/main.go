// Command dlroute decides, from versioned rules, which DLPack device an
// array advertises: the decision JAX makes in __dlpack_device__, as data.
//
//	dlroute resolve --platform gpu --platform-version 'cuda 12030' --local-hardware-id 0
//	dlroute resolve --json < testdata/inputs.jsonl
//	dlroute exchange --buffer array.bin --platform gpu --platform-version '<unknown>' --local-hardware-id 0 --max-version 1,1
//	dlroute test [--rules DIR]
//	dlroute lint [--rules DIR]
//	dlroute rules [--rules DIR]
//	dlroute version
//	dlroute playground [--addr 127.0.0.1:8080] [--rules DIR]
//	dlroute bundle build rules -o rules.tar.gz --sign rules.key
//	dlroute serve --bundle rules.tar.gz --key rules.key.pub
//
// The rules are embedded in the binary; --rules DIR reads a rules directory
// at start-up instead, so a marker edit needs no rebuild.
package main

import (
	"cmp"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"

	"github.com/dlroute/dlroute/engine"
	"github.com/dlroute/dlroute/internal/rulesource"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// command is one subcommand: its one-line summary and its entry point,
// which returns the exit status.
type command struct {
	summary, synopsis string
	run               func(args []string, stdin io.Reader, stdout, stderr io.Writer) int
}

var commands map[string]command

func init() {
	commands = map[string]command{
		"resolve": {"decide the DLPack device of one input, or of JSON Lines on stdin",
			"[--ruleset REF] (--json | --platform P --platform-version V [...])", runResolve},
		"exchange": {"carry out a DLPack exchange for a buffer: export it in place, or copy it into host memory",
			"--buffer FILE [--out FILE] [--ruleset REF] (--input JSON | --platform P --platform-version V [...])", runExchange},
		"test":       {"run every rule-set version's tests", "[--rules DIR] [-v]", runTest},
		"lint":       {"load every rule set and print every error with its position", "[--rules DIR]", runLint},
		"plan":       {"write the plans of rule-set versions, which the decision module decides with, as one file", "[--rules DIR] [-o FILE] [REF ...]", runPlan},
		"rules":      {"list the rule sets and versions with their manifests", "[--rules DIR] [--json]", runRules},
		"detect":     {"probe this machine's devices and show how the rules decide each", "[--ruleset REF] [--ask-jax[=PYTHON]] [--json]", runDetect},
		"interop":    {"decide every producer library's arrays into every consumer's from_dlpack: in place, a copy, or the error", "[--rules DIR] [--producer REFS] [--consumer REFS] [--copy none|true|false] [--arrays] [--json] [--width N] | --catch --producer REFS --consumer REFS", runInterop},
		"diff":       {"show which inputs two rule-set versions decide differently", "[--rules DIR] [--json] [--examples N] [--max-inputs N] [DIR:]NAME[@VERSION] [DIR:]NAME[@VERSION]", runDiff},
		"playground": {"serve the browser playground: edit rules and inputs, see decisions", "[--addr HOST:PORT] [--rules DIR] [--static DIR]", runPlayground},
		"bundle":     {"build, sign and verify rule bundles", "<build|verify|keygen> [flags]", runBundle},
		"serve": {"answer decisions over HTTP from rules that update while it runs",
			"[--addr 127.0.0.1:8181] [--rules DIR | --bundle URL|FILE] [--key PUB] [--engine native|wasm]", runServe},
		"version": {"print dlroute's version, the Go that built it, and its ABI versions", "", runVersion},
	}
}

// commandOrder is the order the usage lists the commands in.
var commandOrder = []string{"resolve", "exchange", "interop", "diff", "test", "lint", "plan", "rules", "detect", "playground", "bundle", "serve", "version"}

func printUsage(w io.Writer) {
	fmt.Fprint(w, "dlroute decides which DLPack device an array advertises, from versioned rules.\n\nUsage:\n  dlroute <command> [flags]\n\nCommands:\n")
	for _, name := range commandOrder {
		fmt.Fprintf(w, "  %-10s %s\n", name, commands[name].summary)
	}
	fmt.Fprint(w, "\nRun 'dlroute <command> --help' for a command's flags.\n")
}

// run is the whole command line, testable: it returns the exit status
// (0 success, 1 a failure it reported, 2 a usage error).
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		printUsage(stderr)
		return 2
	}
	switch args[0] {
	case "-h", "-help", "--help", "help":
		if len(args) > 1 {
			if c, ok := commands[args[1]]; ok {
				return c.run([]string{"--help"}, stdin, stdout, stderr)
			}
		}
		printUsage(stdout)
		return 0
	case "-version", "--version":
		return runVersion(args[1:], stdin, stdout, stderr)
	}
	c, ok := commands[args[0]]
	if !ok {
		fmt.Fprintf(stderr, "error: unknown command %q\n", args[0])
		candidates := commandOrder
		if strings.HasPrefix(args[0], "-") {
			candidates = []string{"--help", "--version"}
		}
		if s := suggest(args[0], candidates); s != "" {
			fmt.Fprintf(stderr, "hint: did you mean %s? see 'dlroute --help'\n", s)
		} else {
			fmt.Fprintf(stderr, "hint: the commands are %s and %s; see 'dlroute --help'\n", strings.Join(commandOrder[:len(commandOrder)-1], ", "), commandOrder[len(commandOrder)-1])
		}
		return 2
	}
	return c.run(args[1:], stdin, stdout, stderr)
}

// newFlags makes a subcommand's flag set. The flag package prints nothing:
// parseFlags prints help to stdout when asked for, and a bad flag as an
// error with a hint instead of a page of usage.
func newFlags(name string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	return fs
}

// parseFlags parses args; ok is false with the exit status when the command
// should stop (help asked for: 0; bad flags: 2).
func parseFlags(fs *flag.FlagSet, args []string, stdout, stderr io.Writer) (status int, ok bool) {
	err := fs.Parse(args)
	switch {
	case errors.Is(err, flag.ErrHelp):
		c := commands[fs.Name()]
		fmt.Fprintf(stdout, "%s\n\n%s\n\nFlags:\n", strings.TrimSpace("Usage: dlroute "+fs.Name()+" "+c.synopsis), c.summary)
		fs.SetOutput(stdout)
		fs.PrintDefaults()
		return 0, false
	case err != nil:
		fmt.Fprintf(stderr, "error: %v\n", err)
	case fs.NArg() > 0:
		fmt.Fprintf(stderr, "error: unexpected argument %q\n", fs.Arg(0))
	default:
		return 0, true
	}
	fmt.Fprintf(stderr, "hint: %ssee 'dlroute %s --help'\n", flagSuggestion(fs, args), fs.Name())
	return 2, false
}

// rulesFlag adds --rules to a command.
func rulesFlag(fs *flag.FlagSet) *string {
	return fs.String("rules", "", "read rule sets from `PATH` instead of the embedded ones: a directory holding <name>/<version>/, a bundle from 'dlroute bundle build' (its digests are checked), or the playground's rules.tar download")
}

// loadCatalog loads the embedded rules, or those at path when given.
// With only, the embedded rules compile just the versions those refs name
// and the versions they import (engine.Options.Select), which is all a
// command that decides with one rule set needs; a directory is still
// compiled whole, so that an error anywhere in it refuses it
// (cmd/dlroute/RATIONALE.md, "Why does resolve compile only the version it
// asks of the embedded rules?").
func loadCatalog(path string, only ...string) (*engine.Catalog, error) {
	fsys, err := rulesFS(path)
	if err != nil {
		return nil, err
	}
	opts := engine.Options{Root: cmp.Or(strings.TrimSuffix(path, "/"), "rules"), Cache: loads}
	if path == "" {
		// Only the embedded rules' parsed.bin is as trusted as this
		// binary; a directory's is not read (engine.Options.TrustParsed).
		opts.TrustParsed, opts.Select = true, only
	}
	return engine.Load(fsys, opts)
}

// loads keeps what loadCatalog made in this process, so a second load
// (diff's two sides, most of whose files are the same; a test that runs
// command after command in one process) parses and compiles only what
// it has not seen. What a Cache gives back is what a fresh Load makes,
// errors included (see engine.Cache); it drops what recent loads did
// not use.
var loads = engine.NewCache()

// rulesFS is the embedded rules, or those at path: a rules directory, or
// a bundle, read as `dlroute bundle verify` reads it without a key (every
// digest checked; the signature is serve's and verify's to require).
func rulesFS(path string) (fs.FS, error) { return rulesource.Open(path, nil, rulesHint) }

const rulesHint = "--rules takes the directory that holds <name>/<version>/ folders, or a bundle from 'dlroute bundle build'"

// printError writes an error as "error: ..." lines, each engine error with
// its position, source line and caret, then its hint.
func printError(w io.Writer, err error) {
	list := engine.Errors(err)
	if len(list) == 0 {
		fmt.Fprintf(w, "error: %s\n", shown(err.Error()))
		return
	}
	for _, e := range list {
		fmt.Fprintf(w, "error: %s\n", shown(e.Error()))
		if e.Hint != "" {
			fmt.Fprintf(w, "hint: %s\n", shown(e.Hint))
		}
	}
}
