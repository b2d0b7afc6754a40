package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/dlroute/dlroute/engine"
	"github.com/dlroute/dlroute/internal/interop"
)

// runInterop is `dlroute interop`: every producer library's arrays (the
// platforms and memory kinds its rules distinguish) handed to every
// consumer library's from_dlpack, each exchange decided by chaining the
// four calls of the libraries' rule sets (package internal/interop). A
// cell is in place, a copy and who makes it, or the exception the user
// sees. --json writes each cell whole, one JSON object per line, with
// every step's input and decision.
//
// The status is 0 when the matrix is decided (an exception in a cell is
// an answer), 1 when the rules cannot decide it, 2 for a usage error.
func runInterop(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := newFlags("interop")
	rulesDir := rulesFlag(fs)
	producers := fs.String("producer", "", "only the producers `REFS`, comma-separated (numpy, torch@v1, jax==0.10.2); default: every library's newest version")
	consumers := fs.String("consumer", "", "only the consumers `REFS`, comma-separated; default: every library's newest version")
	copyArg := fs.String("copy", "none", "from_dlpack's copy argument: `none`, true or false")
	asJSON := fs.Bool("json", false, "write each cell as one line of JSON, with the steps that decided it")
	classes := fs.Bool("arrays", false, "add a row for each kind of array whose exchanges can differ: bool, complex64, bfloat16, uint16, 0-d, empty, strided, transposed, negative-stride, read-only, requires_grad, conj, sparse")
	width := fs.Int("width", 44, "cut each cell of the table to `N` characters (0: never)")
	strict := strictReleaseFlag(fs)
	if status, ok := parseFlags(fs, args, stdout, stderr); !ok {
		return status
	}
	opts := interop.Options{Producers: refs(*producers), Consumers: refs(*consumers), Classes: *classes}
	call := "from_dlpack(x)"
	switch *copyArg {
	case "none":
	default:
		b, err := strconv.ParseBool(*copyArg)
		if err != nil {
			fmt.Fprintf(stderr, "error: --copy is none, true or false, not %q\n", *copyArg)
			fmt.Fprintln(stderr, "hint: --copy true asks from_dlpack(x, copy=True)")
			return 2
		}
		opts.Args = engine.Input{"copy": b}
		call = "from_dlpack(x, copy=" + strings.ToUpper((*copyArg)[:1]) + strconv.FormatBool(b)[1:] + ")"
	}
	if *width < 0 || *width > 0 && *width < 8 {
		fmt.Fprintln(stderr, "error: --width is 0 (never cut) or at least 8")
		fmt.Fprintln(stderr, "hint: see 'dlroute interop --help'")
		return 2
	}
	cat, err := loadCatalog(*rulesDir)
	if err != nil {
		printError(stderr, err)
		return 1
	}
	m, err := opts.Decide(context.Background(), cat)
	if err != nil {
		printError(stderr, err)
		if refused := (*interop.RefusedError)(nil); errors.As(err, &refused) {
			p, c := interop.Libraries(cat)
			fmt.Fprintf(stderr, "hint: producers: %s; consumers: %s (each NAME, NAME@VERSION or NAME==RELEASE)\n", strings.Join(p, ", "), strings.Join(c, ", "))
			return 2
		}
		return 1
	}
	if warnings := m.Warnings(); len(warnings) > 0 {
		if *strict {
			printError(stderr, warnings[0].Refusal())
			return 1
		}
		for _, w := range warnings {
			printNote(stderr, w)
		}
	}
	if *asJSON {
		for _, row := range m.Rows {
			for _, cell := range row.Cells {
				writeJSON(stdout, cell)
			}
		}
		return 0
	}
	printMatrix(stdout, m, call, *width)
	return 0
}

// refs splits a comma-separated list of rule-set refs; nil for none.
func refs(s string) []string {
	var out []string
	for _, r := range strings.Split(s, ",") {
		if r = strings.TrimSpace(r); r != "" {
			out = append(out, r)
		}
	}
	return out
}

// printMatrix writes the matrix as a table: a row per producer's array, a
// column per consumer, each cell cut to width.
func printMatrix(w io.Writer, m *interop.Matrix, call string, width int) {
	producers := map[string]bool{}
	for _, r := range m.Rows {
		producers[r.Producer] = true
	}
	fmt.Fprintf(w, "%s for %s of %s into %s\n\n", call, plural(len(m.Rows), "array"), plural(len(producers), "producer"), plural(len(m.Consumers), "consumer"))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	classes := slices.ContainsFunc(m.Rows, func(r interop.Row) bool { return r.Array.Class != "" })
	fmt.Fprint(tw, "producer\tplatform\tmemory")
	if classes {
		fmt.Fprint(tw, "\tarray")
	}
	for _, c := range m.Consumers {
		fmt.Fprintf(tw, "\t%s", c)
	}
	fmt.Fprintln(tw)
	for _, r := range m.Rows {
		fmt.Fprintf(tw, "%s\t%s\t%s", r.Producer, r.Array.Platform, r.Array.Memory)
		if classes {
			fmt.Fprintf(tw, "\t%s", cmp.Or(r.Array.Class, "-"))
		}
		for _, c := range r.Cells {
			fmt.Fprintf(tw, "\t%s", c.Short(width))
		}
		fmt.Fprintln(tw)
	}
	tw.Flush()
	printChecked(w, m)
	if width > 0 {
		fmt.Fprintf(w, "\nEach cell is cut to %d characters: --width 0 for whole messages, --json for each cell's calls.\n", width)
	}
}

// printChecked is the matrix's legend: each version in it and the releases
// it was checked against, run here or read from source; a cell rests on
// real code only where both sides' versions were run.
func printChecked(w io.Writer, m *interop.Matrix) {
	var versions []interop.VersionCheck
	seen := map[string]bool{}
	for _, v := range m.Versions() {
		if !seen[v.RuleSet] {
			seen[v.RuleSet] = true
			versions = append(versions, v)
		}
	}
	if len(versions) == 0 {
		return
	}
	fmt.Fprintf(w, "\nChecked against real releases (a cell was run here only where both sides were; %d of %d cells):\n", m.RunCells(), m.Cells())
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, v := range versions {
		checked := "no release: from source only"
		if len(v.Checked) > 0 {
			checked = engine.ReleaseRange{Checked: v.Checked}.CheckedString()
		}
		fmt.Fprintf(tw, "  %s\t%s\n", v.RuleSet, checked)
	}
	tw.Flush()
}
