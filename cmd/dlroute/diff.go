package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/dlroute/dlroute/engine"
)

// runDiff is `dlroute diff A B`: which inputs two rule-set versions decide
// differently. Each side is [DIR:]NAME[@VERSION]: a rule set of the
// embedded rules (or of --rules DIR), or, with a DIR: prefix, of that
// rules directory, so an edited copy compares with what ships:
//
//	dlroute diff jax@v2 jax@v3
//	dlroute diff jax /tmp/myrules:jax
//
// --rules DIR is where a side without DIR: is read from. The report names
// each side by its ref, after DIR: where it has one ("from" and "to" in
// --json). The status is diff(1)'s: 0 no difference, 1 differences, 2
// trouble (a usage error, rules that do not load, a domain too large).
func runDiff(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := newFlags("diff")
	rulesDir := rulesFlag(fs)
	asJSON := fs.Bool("json", false, "print the report as one line of JSON")
	examples := fs.Int("examples", engine.DefaultDiffExamples, "show the first `N` inputs of each group")
	maxInputs := fs.Int("max-inputs", engine.DefaultMaxInputs, "refuse to try more than `N` inputs")
	if err := fs.Parse(args); err != nil {
		status, _ := parseFlags(fs, args, stdout, stderr) // help, or the error with its hint
		return status
	}
	switch {
	case fs.NArg() != 2:
		fmt.Fprintf(stderr, "error: diff compares two rule sets, A and B; got %d\n", fs.NArg())
		fmt.Fprintln(stderr, "hint: each is [DIR:]NAME[@VERSION], such as: dlroute diff jax@v2 jax@v3")
		return 2
	case *examples < 0 || *maxInputs < 1:
		fmt.Fprintln(stderr, "error: --examples must be 0 or more, and --max-inputs 1 or more")
		fmt.Fprintln(stderr, "hint: see 'dlroute diff --help'")
		return 2
	}

	catalogs := map[string]*engine.Catalog{}
	var sides [2]*engine.RuleSet
	var labels [2]string
	for i, arg := range fs.Args() {
		rs, label, err := diffSide(arg, *rulesDir, catalogs, stderr)
		if err != nil {
			printError(stderr, err)
			return 2
		}
		sides[i], labels[i] = rs, label
	}
	opts := engine.DiffOptions{MaxInputs: *maxInputs, Examples: *examples}
	if *examples == 0 {
		opts.Examples = -1
	}
	if isTerminal(stderr) { // a large domain takes a while: exchange@v1 -> v2 is 1.4 million inputs
		opts.Progress = progressLine(stderr, "diff "+labels[0]+" "+labels[1])
	}
	rep, err := engine.Diff(context.Background(), sides[0], sides[1], opts)
	if err != nil {
		printError(stderr, err)
		return 2
	}
	rep.From, rep.To = labels[0], labels[1]
	if *asJSON {
		writeJSON(stdout, rep) // one line, as resolve --json writes each answer
	} else {
		printDiff(stdout, rep)
	}
	if rep.Changed > 0 {
		return 1
	}
	return 0
}

// diffSide loads one side, [DIR:]NAME[@VERSION], and names it as the
// report does: its ref, after DIR: when it has one.
func diffSide(arg, rulesDir string, catalogs map[string]*engine.Catalog, stderr io.Writer) (*engine.RuleSet, string, error) {
	dir, ref := rulesDir, arg
	prefix := ""
	if i := strings.LastIndexByte(arg, ':'); i > 0 {
		dir, ref = arg[:i], arg[i+1:]
		prefix = dir + ":"
	}
	cat, ok := catalogs[dir]
	if !ok {
		var err error
		if cat, err = loadCatalog(dir); err != nil {
			var e *engine.Error
			if errors.As(err, &e) && prefix != "" && e.Code == engine.CodeRead && e.Pos == nil {
				withHint := *e // the hint of --rules, for DIR:
				withHint.Hint = "in DIR:NAME[@VERSION], DIR is a directory that holds <name>/<version>/ folders"
				err = &withHint
			}
			return nil, "", err
		}
		catalogs[dir] = cat
	}
	rs, _, err := lookupRuleSet(cat, ref, false, stderr)
	if err != nil {
		return nil, "", err
	}
	return rs, prefix + rs.Ref(), nil
}

// printDiff writes the report for a person: a header, the values tried for
// each input, then each group with its first inputs and both answers.
func printDiff(w io.Writer, rep *engine.DiffReport) {
	changed := fmt.Sprintf("%d decide differently, in %s", rep.Changed, plural(len(rep.Groups), "group"))
	if rep.Changed == 0 {
		changed = "none decides differently"
	}
	fmt.Fprintf(w, "%s -> %s: %s derived from the rules, %s\n", rep.From, rep.To, plural(rep.Tried, "input"), changed)
	width := 0
	for _, in := range rep.Domain.Inputs {
		width = max(width, len(in.Name))
	}
	for _, in := range rep.Domain.Inputs {
		fmt.Fprintf(w, "  %-*s %s", width+1, in.Name+":", compactJSON(in.Values))
	}
	for i, g := range rep.Groups {
		if i == 0 || len(g.Examples) > 0 {
			fmt.Fprintln(w)
		}
		fmt.Fprintf(w, "%s -> %s: %s", g.From, g.To, plural(g.Count, "input"))
		if g.From == g.To {
			verb := " differs"
			if len(g.Differs) > 1 {
				verb = " differ"
			}
			fmt.Fprintf(w, ", %s%s", strings.Join(g.Differs, " and "), verb)
		}
		fmt.Fprintln(w)
		for _, x := range g.Examples {
			fmt.Fprintf(w, "  %s\n    - %s    + %s", x.InputJSON(), compactJSON(x.From), compactJSON(x.To))
		}
		if more := g.Count - len(g.Examples); more > 0 && len(g.Examples) > 0 {
			fmt.Fprintf(w, "  and %d more\n", more)
		}
	}
}

// compactJSON is v as one line of JSON, with its newline.
func compactJSON(v any) string {
	var b strings.Builder
	writeJSON(&b, v)
	return b.String()
}
