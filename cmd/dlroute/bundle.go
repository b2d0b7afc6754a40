package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing/fstest"
	"time"

	"github.com/dlroute/dlroute/bundle"
	"github.com/dlroute/dlroute/engine"
	"github.com/dlroute/dlroute/internal/fsutil/atomicfile"
	"github.com/dlroute/dlroute/internal/fsutil/rootfs"
	"github.com/dlroute/dlroute/internal/rulesource"
	"github.com/dlroute/dlroute/live"
)

// bundleCommands are the subcommands of `dlroute bundle`.
var bundleCommands map[string]command

func init() {
	bundleCommands = map[string]command{
		"build": {"pack rules folders into a bundle, after they compile and pass their tests",
			"DIR... -o FILE [--sign KEY] [--revision REV] [--sequence N]", runBundleBuild},
		"verify": {"check a bundle as serve would: digests, signature, compile, tests",
			"FILE [--key PUB]...", runBundleVerify},
		"keygen": {"make an Ed25519 key pair for signing bundles",
			"-o FILE [--name NAME]", runBundleKeygen},
	}
}

func runBundle(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		w, status := stdout, 0
		if len(args) == 0 {
			w, status = stderr, 2
		}
		fmt.Fprintf(w, "Usage: dlroute bundle <build|verify|keygen> [flags]\n\n%s\n\n", commands["bundle"].summary)
		for _, name := range []string{"build", "verify", "keygen"} {
			fmt.Fprintf(w, "  %-7s %s\n", name, bundleCommands[name].summary)
		}
		return status
	}
	c, ok := bundleCommands[args[0]]
	if !ok {
		fmt.Fprintf(stderr, "error: unknown bundle command %q\nhint: the bundle commands are build, verify and keygen\n", args[0])
		return 2
	}
	return c.run(args[1:], stdin, stdout, stderr)
}

// parseSub parses a bundle subcommand's flags, which may come before,
// between or after its arguments (`bundle build rules -o b.tar.gz`), and
// returns the arguments; ok is false with the exit status when the
// command should stop.
func parseSub(fs *flag.FlagSet, args []string, stdout, stderr io.Writer) (positional []string, status int, ok bool) {
	for {
		err := fs.Parse(args)
		if errors.Is(err, flag.ErrHelp) {
			c := bundleCommands[fs.Name()]
			fmt.Fprintf(stdout, "Usage: dlroute bundle %s %s\n\n%s\n\nFlags:\n", fs.Name(), c.synopsis, c.summary)
			fs.SetOutput(stdout)
			fs.PrintDefaults()
			return nil, 0, false
		}
		if err != nil {
			fmt.Fprintf(stderr, "error: %v\nhint: see 'dlroute bundle %s --help'\n", err, fs.Name())
			return nil, 2, false
		}
		if fs.NArg() == 0 {
			return positional, 0, true
		}
		positional = append(positional, fs.Arg(0))
		args = fs.Args()[1:]
	}
}

func runBundleBuild(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := newFlags("build")
	out := fs.String("o", "", "write the bundle to `FILE`")
	sign := fs.String("sign", "", "sign with the private key in `KEY` (from 'dlroute bundle keygen')")
	revision := fs.String("revision", "", "the bundle's revision, such as a git commit or a date (`REV`); default: a digest of its files")
	sequence := fs.Uint64("sequence", 0, "order the bundle by `N`: a host refuses a bundle of a lower sequence than the one it serves (default: the time in Unix seconds, or one more than the bundle at -o FILE if that is higher; 0: unordered)")
	force := fs.Bool("force-sequence", false, "build with a --sequence that hosts would refuse as from the future (a time more than a day after the clock, or a counter far ahead of the bundle at -o FILE)")
	dirs, status, ok := parseSub(fs, args, stdout, stderr)
	if !ok {
		return status
	}
	if len(dirs) == 0 || *out == "" {
		fmt.Fprintln(stderr, "error: bundle build needs the rules folders and -o FILE")
		fmt.Fprintln(stderr, "hint: dlroute bundle build rules -o rules.tar.gz")
		return 2
	}
	opts := bundle.BuildOptions{Revision: *revision, Sequence: *sequence}
	if !flagGiven(fs, "sequence") {
		opts.Sequence = nextSequence(*out, time.Now())
	} else if ahead := sequenceAhead(*out, *sequence, time.Now()); ahead != nil && !*force {
		fmt.Fprintf(stderr, "error: %s: %v\n", live.CodeSequenceAhead, ahead)
		fmt.Fprintln(stderr, "hint: a host refuses it; leave --sequence out for the time now, or give --force-sequence if you mean it")
		return 1
	}
	if *sign != "" {
		key, err := os.ReadFile(*sign)
		if err != nil {
			printError(stderr, err)
			return 1
		}
		opts.SignerKeys = []string{string(key)}
	}
	fsys, root, err := gatherRules(dirs)
	if err != nil {
		fmt.Fprintf(stderr, "error: %v\n", err)
		return 1
	}
	// The rules pass the gate serve would put them through.
	if _, err := (live.Gate{Load: engine.Options{Root: root, Cache: loads}}).Admit(context.Background(), &live.Candidate{Origin: root, Dir: fsys}); err != nil {
		printRefusal(stderr, err)
		return 1
	}
	// The plans travel with the rules, under the signed manifest: what
	// the gate built, again positioned under "rules", which every reader's
	// gate builds too (live.BundlePlans).
	if opts.Plans, err = live.BundlePlans(fsys, engine.Options{Cache: loads}); err != nil {
		printError(stderr, err)
		return 1
	}
	var m *bundle.Manifest
	atomicfile.RemoveStale(*out, time.Now())                      // what a build killed half way left
	err = atomicfile.Write(*out, 0o644, func(w io.Writer) error { // a watcher never sees half a bundle
		var err error
		m, err = bundle.Build(w, fsys, opts)
		return err
	})
	if err != nil {
		printError(stderr, err)
		return 1
	}
	signed := "unsigned"
	if *sign != "" {
		signed = "signed"
	}
	fmt.Fprintf(stdout, "%s: revision %s, sequence %d, %s, %d files, %s\n", *out, m.Revision, m.Sequence, strings.Join(m.RuleSets, " "), len(m.Files), signed)
	return 0
}

// nextSequence is a bundle's sequence when --sequence is not given: the
// time in Unix seconds, so that bundles built one after another are in
// order with no flag, and one more than the bundle already at out when
// that is higher, so that two builds within a second, or after a clock
// went back, are still in order where they replace each other.
func nextSequence(out string, now time.Time) uint64 {
	seq := uint64(max(now.Unix(), 1))
	if prev := sequenceAt(out); prev >= seq && prev < math.MaxUint64 && live.SequenceAhead(prev+1, 0, now, 0) == nil {
		seq = prev + 1
	}
	return seq
}

// sequenceAt is the sequence of the bundle already at out, or 0 (none,
// or unordered) where there is none that reads.
func sequenceAt(out string) uint64 {
	if prev, err := bundle.ReadFile(out, bundle.ReadOptions{}); err == nil {
		return prev.Manifest.Sequence
	}
	return 0
}

// sequenceAhead is why a --sequence would be refused by a host as from
// the future, as live.SequenceAhead says: a time after the clock and its
// margin, or a counter further ahead of the bundle at out than a host
// allows by default.
func sequenceAhead(out string, seq uint64, now time.Time) *live.AheadError {
	return live.SequenceAhead(seq, sequenceAt(out), now, 0)
}

// flagGiven reports whether the command line set the flag name.
func flagGiven(fs *flag.FlagSet, name string) bool {
	given := false
	fs.Visit(func(f *flag.Flag) { given = given || f.Name == name })
	return given
}

// gatherRules reads the folders given to `bundle build` into one rules
// directory (read as engine.DirFS reads: regular files only, never
// blocking, none over MaxRuleFileSize; and nothing outside the folder
// given, rootfs.Open). Each is a rules directory (rules/), a rule set's folder
// (rules/jax) or a version's (rules/jax/v3), told apart by where its
// manifest.yaml files are. root is the folder that holds them all when
// there is one, so that errors point at the files on disk.
func gatherRules(dirs []string) (fstest.MapFS, string, error) {
	out := fstest.MapFS{}
	var roots []string
	for _, dir := range dirs {
		dir = filepath.Clean(dir)
		prefix, root := "", dir // what the folder is in a rules directory, and that directory
		switch {
		case exists(filepath.Join(dir, engine.ManifestFile)):
			prefix, root = filepath.Base(filepath.Dir(dir))+"/"+filepath.Base(dir)+"/", filepath.Dir(filepath.Dir(dir))
		case anyVersion(dir):
			prefix, root = filepath.Base(dir)+"/", filepath.Dir(dir)
		}
		fsys, err := rootfs.Open(dir)
		if err != nil {
			return nil, "", err
		}
		found := 0
		err = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(dir, p)
			name := prefix + filepath.ToSlash(rel)
			if d.IsDir() && strings.HasPrefix(d.Name(), ".") && p != dir {
				return filepath.SkipDir
			}
			if d.IsDir() || strings.Count(name, "/") != 2 || strings.HasPrefix(d.Name(), ".") {
				return nil
			}
			data, err := engine.ReadFile(fsys, filepath.ToSlash(rel))
			if err != nil {
				return err
			}
			if _, dup := out[name]; dup {
				return fmt.Errorf("%s is given twice (through %s)", name, dir)
			}
			out[name] = &fstest.MapFile{Data: data}
			found++
			return nil
		})
		if err != nil {
			return nil, "", err
		}
		if found == 0 {
			return nil, "", fmt.Errorf("%s holds no rule-set version: give rules/, rules/<name> or rules/<name>/<version>", dir)
		}
		if !slices.Contains(roots, root) {
			roots = append(roots, root)
		}
	}
	if len(roots) == 1 {
		return out, roots[0], nil
	}
	return out, "bundle", nil
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// anyVersion reports whether dir is a rule set's folder: a subfolder
// holds a manifest.yaml.
func anyVersion(dir string) bool {
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if e.IsDir() && exists(filepath.Join(dir, e.Name(), engine.ManifestFile)) {
			return true
		}
	}
	return false
}

func runBundleVerify(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := newFlags("verify")
	var keys keyList
	fs.Var(&keys, "key", "require a signature by the public key in `PUB` (a file, or the key itself); may repeat")
	files, status, ok := parseSub(fs, args, stdout, stderr)
	if !ok {
		return status
	}
	if len(files) != 1 {
		fmt.Fprintln(stderr, "error: bundle verify checks one bundle FILE")
		fmt.Fprintln(stderr, "hint: dlroute bundle verify rules.tar.gz --key rules.pub")
		return 2
	}
	src := live.File(files[0])
	c, err := src.Fetch(context.Background())
	if err == nil {
		var s *live.Snapshot
		s, err = live.Gate{Keys: keys, Load: engine.Options{Cache: loads}}.Admit(context.Background(), c)
		if err == nil {
			m := s.Manifest()
			cases := 0
			for _, rs := range s.Catalog().RuleSets() {
				cases += len(rs.Cases())
			}
			signature := "not checked (no --key)"
			if len(keys) > 0 {
				signature = "verified, by " + strings.Join(s.SignedBy(), ", ")
			}
			fmt.Fprintf(stdout, "%s: revision %s, sequence %d, %s, %d files\n", files[0], m.Revision, m.Sequence, strings.Join(m.RuleSets, " "), len(m.Files))
			plans := "none (a bundle from before bundles carried plans)"
			if p := s.Manifest().Plans; p != nil {
				plans = fmt.Sprintf("%d versions, %d bytes, the plans its rules build", len(m.RuleSets), p.Size)
			}
			fmt.Fprintf(stdout, "digests: ok\nsignature: %s\nplans: %s\ntests: %d cases pass\n", signature, plans, cases)
			return 0
		}
	}
	printRefusal(stderr, err)
	return 1
}

func runBundleKeygen(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := newFlags("keygen")
	out := fs.String("o", "", "write the private key to `FILE` and the public key to FILE.pub")
	name := fs.String("name", "dlroute-rules", "the key's `NAME`, shown in signatures")
	rest, status, ok := parseSub(fs, args, stdout, stderr)
	if !ok {
		return status
	}
	if *out == "" || len(rest) > 0 {
		fmt.Fprintln(stderr, "error: bundle keygen needs -o FILE, and nothing else")
		fmt.Fprintln(stderr, "hint: dlroute bundle keygen -o rules.key")
		return 2
	}
	private, public, err := bundle.GenerateKey(*name)
	if err != nil {
		printError(stderr, err)
		return 1
	}
	// O_EXCL: a key is never overwritten by accident.
	f, err := os.OpenFile(*out, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		fmt.Fprintf(stderr, "error: %v\n", err)
		if errors.Is(err, os.ErrExist) {
			fmt.Fprintln(stderr, "hint: keygen does not overwrite a key; remove it first, or choose another -o")
		}
		return 1
	}
	_, err = fmt.Fprintln(f, private)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.WriteFile(*out+".pub", []byte(public+"\n"), 0o644)
	}
	if err != nil {
		printError(stderr, err)
		return 1
	}
	fmt.Fprintf(stdout, "private key: %s (keep it secret: it signs bundles)\npublic key:  %s.pub\n%s\n", *out, *out, public)
	return 0
}

// keyList is --key, repeatable: each a file holding a public key, or the
// key itself.
type keyList []string

func (k *keyList) String() string { return strings.Join(*k, ",") }

func (k *keyList) Set(v string) error {
	key, err := rulesource.PublicKey(v)
	if err != nil {
		return err
	}
	*k = append(*k, key)
	return nil
}

// printRefusal prints why rules were refused: each error with its
// position and hint, then a hint for the refusal's code.
func printRefusal(w io.Writer, err error) {
	var ref *live.Refusal
	if !errors.As(err, &ref) {
		printError(w, err)
		return
	}
	if list := engine.Errors(err); len(list) > 0 {
		printError(w, err)
	} else {
		fmt.Fprintf(w, "error: %s\n", ref.Error())
	}
	if hint := refusalHints[ref.Code]; hint != "" {
		fmt.Fprintf(w, "hint: %s\n", hint)
	}
}

// refusalHints say what usually fixes a refusal, by its code.
var refusalHints = map[engine.Code]string{
	engine.CodeImport:        "a bundle carries the versions its versions import: add the imported version's folder, or build from the whole rules directory",
	engine.CodeTestFailure:   "a bundle is built only from rules whose tests pass: fix the rule or the case, and run 'dlroute test --rules DIR'",
	bundle.CodeUnsigned:      "sign it: dlroute bundle build ... --sign KEY",
	bundle.CodeUnknownSigner: "--key takes the public key of the private key the bundle was signed with",
	bundle.CodeBadSignature:  "the manifest changed after it was signed: build and sign the bundle again",
	bundle.CodeDigest:        "a file changed after the bundle was built: build it again",
	bundle.CodePlansMismatch: "the plans changed after the bundle was built, or another dlroute built them: build the bundle again with this one",
	bundle.CodeTruncated:     "the file is incomplete: copy it again",
	bundle.CodeNotBundle:     "a bundle is what 'dlroute bundle build' writes",
	live.CodeUnreachable:     "check the URL, and that the bundle server is up",
	live.CodeTimeout:         "the bundle server is slow or unreachable",
	engine.CodeNoRuleSet:     "give rules/, rules/<name> or rules/<name>/<version>",
	bundle.CodeUnlisted:      "a file was added after the bundle was built: build it again",
	bundle.CodeMissingFile:   "a file was removed after the bundle was built: build it again",
	bundle.CodeManifest:      "the bundle is not one 'dlroute bundle build' wrote, or was changed after",
	bundle.CodeBadPath:       "the archive was not written by 'dlroute bundle build': it holds a path outside <name>/<version>/",
	bundle.CodeCorrupt:       "the file is damaged: copy it again",
	live.CodeHTTPStatus:      "the bundle server answered with an error",
	bundle.CodeNotRegular:    "a bundle is a regular file that holds only files and folders, as 'dlroute bundle build' writes it",
	bundle.CodeTooLong:       "a bundle's limits are in the bundle package's documentation",
	bundle.CodeDuplicate:     "the archive holds a path twice: build it with 'dlroute bundle build'",
	bundle.CodeBadKey:        "keys are made by 'dlroute bundle keygen'",
	live.CodeRead:            "check the path",
	bundle.CodeBadRevision:   "a revision uses only [A-Za-z0-9._:+@/-], up to 128 characters",
	live.CodeRollback:        "a host serves only bundles newer than the one it has: build with a higher --sequence, or serve --allow-rollback to go back",
	live.CodeSequenceReused:  "each bundle has its own sequence: build it again with a higher --sequence (by default, the time)",
}
