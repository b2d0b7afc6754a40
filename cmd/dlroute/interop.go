package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
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
// sees. A cell that raises is marked with its remedy, the cheapest fix
// the rules say crosses (interop.FindRemedy), listed under the table.
// --json writes each cell whole, one JSON object per line, with every
// step's input and decision and the remedy. --catch writes instead, for
// each producer and consumer named, the exception types the exchange
// raises over every version of both (interop.CatchSet) and the except
// clause that catches them.
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
	catch := fs.Bool("catch", false, "with --producer and --consumer: the exception types each exchange raises over every version of both libraries, every array, and copy None, True and False, and the except clause to paste")
	strict := strictReleaseFlag(fs)
	if status, ok := parseFlags(fs, args, stdout, stderr); !ok {
		return status
	}
	if *catch {
		return runCatch(fs, *rulesDir, refs(*producers), refs(*consumers), *asJSON, stdout, stderr)
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
	remedies := &remedyNotes{}
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
			fmt.Fprintf(tw, "\t%s", remedies.cell(c, width))
		}
		fmt.Fprintln(tw)
	}
	tw.Flush()
	remedies.print(w)
	printLanes(w, m)
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

// printLanes says by which lane the cells cross, and which producers'
// array types also expose DLPack 1.3's C exchange API, a lane no consumer
// in the table reads (rules/README.md, "The C exchange lane").
func printLanes(w io.Writer, m *interop.Matrix) {
	byC := 0
	var exposed []string
	seen := map[string]bool{}
	for _, r := range m.Rows {
		for _, c := range r.Cells {
			if c.Lane == interop.LaneCExchange {
				byC++
			}
		}
		if len(r.CExchange) == 0 || seen[r.Producer] {
			continue
		}
		seen[r.Producer] = true
		var how []string
		for _, api := range r.CExchange {
			how = append(how, fmt.Sprintf("%s, a %s of DLPack %d.%d", api.Attribute, api.Form, api.Version[0], api.Version[1]))
		}
		exposed = append(exposed, r.Producer+" ("+strings.Join(how, "; ")+")")
	}
	if len(exposed) == 0 && byC == 0 {
		return
	}
	if byC == 0 {
		fmt.Fprintln(w, "\nLanes: every cell crosses by x.__dlpack__(). These producers' types also expose\nthe C exchange API (type(x).__dlpack_c_exchange_api__), which no consumer here reads:")
	} else {
		fmt.Fprintf(w, "\nLanes: %s cross by the C exchange API of the producer's type, the rest by x.__dlpack__(). Types that expose it:\n", plural(byC, "cell"))
	}
	for _, e := range exposed {
		fmt.Fprintf(w, "  %s\n", e)
	}
}

// remedyNotes numbers the remedies of a table's cells: each fix and the
// outcome it comes to once, in the order the cells meet them.
type remedyNotes struct {
	notes []interop.Remedy
}

// cell is c as the table shows it, cut to width with its remedy's
// number, " [n]", inside it.
func (r *remedyNotes) cell(c interop.Cell, width int) string {
	if c.Remedy == nil {
		return c.Short(width)
	}
	i := slices.Index(r.notes, *c.Remedy)
	if i < 0 {
		i = len(r.notes)
		r.notes = append(r.notes, *c.Remedy)
	}
	mark := fmt.Sprintf(" [%d]", i+1)
	if width > 0 {
		width = max(width-len(mark), 1)
	}
	return c.Short(width) + mark
}

// print lists the remedies under the table.
func (r *remedyNotes) print(w io.Writer) {
	if len(r.notes) == 0 {
		return
	}
	fmt.Fprintln(w, "\nRemedies, the cheapest fix that makes each marked cell cross (decided again by the rules):")
	for i, n := range r.notes {
		fmt.Fprintf(w, "  [%d] %s, then %s\n", i+1, n.Fix, interop.Cell{Outcome: n.Outcome}.Short(0))
	}
}

// runCatch is `dlroute interop --catch`: the portable catch set of each
// producer library into each consumer library.
func runCatch(fs *flag.FlagSet, rulesDir string, producers, consumers []string, asJSON bool, stdout, stderr io.Writer) int {
	var conflict []string
	fs.Visit(func(f *flag.Flag) {
		if f.Name == "copy" || f.Name == "arrays" || f.Name == "width" || f.Name == "strict-release" {
			conflict = append(conflict, "--"+f.Name)
		}
	})
	switch {
	case len(producers) == 0 || len(consumers) == 0:
		fmt.Fprintln(stderr, "error: --catch needs --producer and --consumer")
		fmt.Fprintln(stderr, "hint: dlroute interop --catch --producer numpy --consumer torch (library names: every version; a ref such as torch@v1: that one)")
		return 2
	case len(conflict) > 0:
		fmt.Fprintf(stderr, "error: --catch decides every array and copy argument; %s does not go with it\n", strings.Join(conflict, " and "))
		fmt.Fprintln(stderr, "hint: dlroute interop --catch --producer numpy --consumer torch")
		return 2
	}
	cat, err := loadCatalog(rulesDir)
	if err != nil {
		printError(stderr, err)
		return 1
	}
	for i, p := range producers {
		for j, c := range consumers {
			set, err := interop.CatchSet(context.Background(), cat, p, c)
			if err != nil {
				printError(stderr, err)
				if refused := (*interop.RefusedError)(nil); errors.As(err, &refused) {
					ps, cs := interop.Libraries(cat)
					fmt.Fprintf(stderr, "hint: producers: %s; consumers: %s (each NAME, NAME@VERSION or NAME==RELEASE)\n", strings.Join(ps, ", "), strings.Join(cs, ", "))
					return 2
				}
				return 1
			}
			if asJSON {
				writeJSON(stdout, set)
				continue
			}
			if i+j > 0 {
				fmt.Fprintln(stdout)
			}
			printCatch(stdout, set)
		}
	}
	return 0
}

// printCatch writes a catch set for a person: the versions decided, the
// types, the outcomes no except catches, and the except clause; lines
// of at most 100 columns.
func printCatch(w io.Writer, set *interop.Catch) {
	fmt.Fprintf(w, "%s into %s: %s (every array; from_dlpack(x), copy=True and copy=False where taken)\n",
		set.Producer, set.Consumer, plural(set.Exchanges, "exchange"))
	wrapList(w, fmt.Sprintf("  producer versions (%d): ", len(set.ProducerVersions)), set.ProducerVersions)
	wrapList(w, fmt.Sprintf("  consumer versions (%d): ", len(set.ConsumerVersions)), set.ConsumerVersions)
	if len(set.Types) == 0 {
		fmt.Fprintln(w, "  raises nothing")
	} else {
		wrapList(w, "  raises: ", set.Types)
	}
	if len(set.Uncatchable) > 0 {
		wrapList(w, "  and, caught by no except: ", set.Uncatchable)
	}
	if set.Except != "" {
		fmt.Fprintf(w, "  %s\n", set.Except)
	}
}

// wrapList writes lead and items, comma-separated, wrapped at 100 columns
// with the lines after the first indented by four spaces.
func wrapList(w io.Writer, lead string, items []string) {
	line := lead
	for i, it := range items {
		if i < len(items)-1 {
			it += ","
		}
		switch {
		case i == 0:
			line += it
		case len(line)+1+len(it) > 100:
			fmt.Fprintln(w, line)
			line = "    " + it
		default:
			line += " " + it
		}
	}
	fmt.Fprintln(w, line)
}
