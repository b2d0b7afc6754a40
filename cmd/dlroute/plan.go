package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/dlroute/dlroute/engine"
	"github.com/dlroute/dlroute/internal/fsutil/atomicfile"
	"github.com/dlroute/dlroute/live"
	"github.com/dlroute/dlroute/plan"
)

// runPlan is `dlroute plan`: it compiles rule-set versions and writes
// their plans as one set (plan.EncodeSet), the file a host hands the
// decision module (wasm/decision, dlroute_load_set), for any rules
// directory as rules/plans.bin is for the embedded rules. Positions in
// the plans name the rules as --rules gives them, and the embedded ones
// as "rules", so `dlroute plan` writes rules/plans.bin byte for byte.
// A version outside the CEL a plan covers is refused with each
// plan_unsupported error at its file:line:col, as lint prints them, and
// nothing is written.
func runPlan(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := newFlags("plan")
	rulesDir := rulesFlag(fs)
	out := fs.String("o", "", "write the plans to `FILE` (default: stdout, when it is not a terminal)")
	refs, status, ok := parseWithArgs(fs, args, stdout, stderr)
	if !ok {
		return status
	}
	if *out == "" && isTerminal(stdout) && !isDevNull(stdout) {
		fmt.Fprintln(stderr, "error: the plans are binary, and stdout is a terminal")
		fmt.Fprintln(stderr, "hint: dlroute plan -o plans.bin, or redirect stdout: dlroute plan > plans.bin")
		return 2
	}
	cat, err := loadCatalog(*rulesDir, refs...)
	if err != nil {
		printError(stderr, err)
		return 1
	}
	versions := cat.RuleSets()
	if len(refs) > 0 {
		versions = nil
		for _, ref := range refs {
			rs, _, err := lookupRuleSet(cat, ref, false, stderr)
			if err != nil {
				printError(stderr, err)
				return 1
			}
			versions = append(versions, rs)
		}
	}
	data, err := planSet(versions)
	if err != nil {
		printError(stderr, err)
		return 1
	}
	if *out == "" {
		if _, err := stdout.Write(data); err != nil {
			printError(stderr, err)
			return 1
		}
		return 0
	}
	if err := atomicfile.WriteFile(*out, 0o644, data); err != nil {
		printError(stderr, err)
		return 1
	}
	entries, _ := plan.DecodeSet(data)
	names := make([]string, len(entries))
	for i, e := range entries {
		names[i] = e.Ref
	}
	fmt.Fprintf(stdout, "%s: %s, %s\n", *out, plural(len(entries), "plan"), strings.Join(names, " "))
	return 0
}

// planSet encodes the plans of versions as one set, each version once.
// The error lists every plan_unsupported error once (live.PlansOf).
func planSet(versions []*engine.RuleSet) ([]byte, error) {
	plans, err := live.PlansOf(versions)
	if err != nil {
		return nil, err
	}
	entries := make([]plan.Entry, 0, len(plans))
	for ref, data := range plans {
		entries = append(entries, plan.Entry{Ref: ref, Plan: data})
	}
	return plan.EncodeSet(entries), nil
}

// isDevNull reports whether w is the null device, a character device
// that isTerminal counts, where binary output does no harm.
func isDevNull(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err1 := f.Stat()
	null, err2 := os.Stat(os.DevNull)
	return err1 == nil && err2 == nil && os.SameFile(st, null)
}

// parseWithArgs parses a command's flags, which may come before, between
// or after its arguments (`plan jax@v3 -o plans.bin`), and returns the
// arguments; ok is false with the exit status when the command should
// stop, as parseFlags says.
func parseWithArgs(fs *flag.FlagSet, args []string, stdout, stderr io.Writer) (positional []string, status int, ok bool) {
	rest := args
	for {
		if err := fs.Parse(rest); err != nil {
			return nil, runParseFlags(fs, rest, stdout, stderr), false
		}
		if fs.NArg() == 0 {
			return positional, 0, true
		}
		positional = append(positional, fs.Arg(0))
		rest = fs.Args()[1:]
	}
}

// runParseFlags has parseFlags print help or a bad flag's error, and
// returns its exit status.
func runParseFlags(fs *flag.FlagSet, args []string, stdout, stderr io.Writer) int {
	status, _ := parseFlags(fs, args, stdout, stderr)
	return status
}
