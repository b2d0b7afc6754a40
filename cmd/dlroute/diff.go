package main

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/dlroute/dlroute/engine"
	"github.com/dlroute/dlroute/internal/interop"
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
// --json).
//
// Then, where A and B are versions of one rule set, the report shows the
// cells of the interop matrix that change (see printMatrixDiff): every
// library's arrays, array classes included, into every library, decided
// with each side's rules, and A's and B's library at A's and B's version
// ("matrix" in --json; --matrix=false leaves it out). The status is
// diff(1)'s: 0 no difference, 1 differences (an input or a cell), 2
// trouble (a usage error, rules that do not load, a domain too large).
func runDiff(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := newFlags("diff")
	rulesDir := rulesFlag(fs)
	asJSON := fs.Bool("json", false, "print the report as one line of JSON")
	examples := fs.Int("examples", engine.DefaultDiffExamples, "show the first `N` inputs of each group")
	maxInputs := fs.Int("max-inputs", engine.DefaultMaxInputs, "refuse to try more than `N` inputs")
	withMatrix := fs.Bool("matrix", true, "show the cells of the interop matrix that change")
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
	var sides [2]diffSide
	for i, arg := range fs.Args() {
		side, err := loadDiffSide(arg, *rulesDir, catalogs, stderr)
		if err != nil {
			printError(stderr, err)
			return 2
		}
		sides[i] = side
	}
	opts := engine.DiffOptions{MaxInputs: *maxInputs, Examples: *examples}
	if *examples == 0 {
		opts.Examples = -1
	}
	if isTerminal(stderr) { // a large domain takes a while: exchange@v1 -> v2 is 1.4 million inputs
		opts.Progress = progressLine(stderr, "diff "+sides[0].label+" "+sides[1].label)
	}
	// A domain too large to try is the error it is, but the matrix is still
	// compared: a library's rule sets (numpy, torch) declare far more
	// inputs than the limit, and their cells are what an edit changes.
	status := 0
	rep, err := engine.Diff(context.Background(), sides[0].rs, sides[1].rs, opts)
	if err != nil {
		printError(stderr, err)
		if e := (*engine.Error)(nil); !*withMatrix || !errors.As(err, &e) || e.Code != engine.CodeDomainTooLarge {
			return 2
		}
		status, rep = 2, nil
	} else {
		rep.From, rep.To = sides[0].label, sides[1].label
	}
	var md *matrixDiff
	if *withMatrix {
		if md, err = diffMatrix(context.Background(), sides); err != nil {
			printError(stderr, err)
			return 2
		}
	}
	if *asJSON {
		// one line, as resolve --json writes each answer; only "matrix"
		// where the inputs were not tried
		writeJSON(stdout, struct {
			*engine.DiffReport
			Matrix *matrixDiff `json:"matrix,omitempty"`
		}{rep, md})
	} else {
		if rep != nil {
			printDiff(stdout, rep)
			if md != nil {
				fmt.Fprintln(stdout)
			}
		}
		if md != nil {
			printMatrixDiff(stdout, md)
		}
	}
	switch {
	case status != 0:
		return status
	case rep.Changed > 0 || md != nil && len(md.Changes) > 0:
		return 1
	}
	return 0
}

// diffSide is one side of a diff: a rule set, the rules it was read
// from, and its name in the report.
type diffSide struct {
	rs    *engine.RuleSet
	cat   *engine.Catalog
	dir   string // the rules directory; "": the embedded rules
	label string // its ref, after DIR: where it has one
}

// loadDiffSide loads one side, [DIR:]NAME[@VERSION].
func loadDiffSide(arg, rulesDir string, catalogs map[string]*engine.Catalog, stderr io.Writer) (diffSide, error) {
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
			return diffSide{}, err
		}
		catalogs[dir] = cat
	}
	rs, _, err := lookupRuleSet(cat, ref, false, stderr)
	if err != nil {
		return diffSide{}, err
	}
	return diffSide{rs: rs, cat: cat, dir: dir, label: prefix + rs.Ref()}, nil
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

// matrixDiff is the interop matrix's part of diff's report ("matrix" in
// --json): the cells that change from the matrix of A's rules, A's library
// at A's version, to B's.
type matrixDiff struct {
	// From and To name what the matrices differ by: A's and B's refs where
	// their rule set is a library's, else the rules each reads.
	From, To string
	// NotCompared says why no matrix was compared; the rest is then empty.
	NotCompared string
	Cells       int // the cells compared
	Changes     []interop.CellChange
	pinned      bool // From and To are refs
}

// diffMatrix compares the interop matrices of the two sides: every
// library's newest version and its array classes, the side's library at
// the side's version. Two rule sets, rather than two versions of one, or
// a rule set of no library read from the same rules on both sides, are
// not compared; nor is a version that cannot be a producer or consumer
// (a jax version no release shipped): the report says why.
func diffMatrix(ctx context.Context, sides [2]diffSide) (*matrixDiff, error) {
	a, b := sides[0], sides[1]
	if a.rs.Name() != b.rs.Name() {
		return &matrixDiff{NotCompared: fmt.Sprintf("%s and %s are not versions of one rule set", a.label, b.label)}, nil
	}
	md := &matrixDiff{From: a.label, To: b.label, pinned: true}
	var ms [2]interop.MatrixSide
	pinned := false
	for i, s := range sides {
		o, ok := interop.Options{Classes: true}.At(s.cat, s.rs)
		ms[i], pinned = interop.MatrixSide{Catalog: s.cat, Options: o}, pinned || ok
	}
	if !pinned {
		if a.cat == b.cat {
			return &matrixDiff{NotCompared: fmt.Sprintf("%s is no producer or consumer of its own, and both sides read the same rules", a.rs.Name())}, nil
		}
		md.From, md.To, md.pinned = rulesName(a.dir), rulesName(b.dir), false
	}
	_, after, changes, err := interop.DiffCatalogs(ctx, ms[0], ms[1])
	if refused := (*interop.RefusedError)(nil); errors.As(err, &refused) {
		return &matrixDiff{NotCompared: refused.Error()}, nil
	} else if err != nil {
		return nil, err
	}
	md.Cells, md.Changes = after.Cells(), changes
	return md, nil
}

// rulesName names a rules directory for a person.
func rulesName(dir string) string { return cmp.Or(dir, "the embedded rules") }

// printMatrixDiff writes the matrix's part of the report: a header, then
// each cell that changes, "into" its consumer, before (-) and after (+),
// with what changed beyond the words of the interop table (the device,
// the lane, the remedy).
func printMatrixDiff(w io.Writer, md *matrixDiff) {
	if md.NotCompared != "" {
		fmt.Fprintf(w, "interop matrix: not compared, %s\n", md.NotCompared)
		return
	}
	changed := fmt.Sprintf("%d change", len(md.Changes))
	switch len(md.Changes) {
	case 0:
		changed = "none changes"
	case 1:
		changed = "1 changes"
	}
	beside := "beside every other library's newest version"
	if !md.pinned {
		beside = "(every library's newest version)"
	}
	fmt.Fprintf(w, "interop matrix, %s -> %s %s: %s compared, %s\n", md.From, md.To, beside, plural(md.Cells, "cell"), changed)
	for _, ch := range md.Changes {
		switch {
		case ch.From == nil:
			fmt.Fprintf(w, "  %s, added\n    + %s\n", ch, cellWords(ch.To, nil))
		case ch.To == nil:
			fmt.Fprintf(w, "  %s, removed\n    - %s\n", ch, cellWords(ch.From, nil))
		default:
			fmt.Fprintf(w, "  %s\n    - %s\n    + %s\n", ch, cellWords(ch.From, ch.Differs), cellWords(ch.To, ch.Differs))
		}
	}
}

// cellWords is a cell as the interop table shows it (Cell.Short), with
// the fields of differs it does not show: the device, the lane, the
// outcome by the other lane, the remedy (or, for a cell that raises, that
// it has none).
func cellWords(c *interop.Cell, differs []string) string {
	s := c.Short(0)
	if slices.Contains(differs, "device") && c.Device != nil {
		s += fmt.Sprintf(" (%s, %d)", c.Device.Type, c.Device.ID)
	}
	if slices.Contains(differs, "lane") {
		s += "; lane: " + string(c.Lane)
	}
	if slices.Contains(differs, "other_lane") {
		s += "; by the other lane: " + cmp.Or(string(c.OtherLane), "the same")
	}
	switch {
	case !slices.Contains(differs, "remedy"):
	case c.Remedy != nil:
		s += "; remedy: " + c.Remedy.Fix
	case c.Outcome == interop.Raises:
		s += "; no remedy"
	}
	return s
}

// MarshalJSON writes the matrix's part of diff --json: {"not_compared":
// why}, or from, to, the cells compared, and each change with the fields
// compared of each side's cell (null for a cell added or removed).
func (md *matrixDiff) MarshalJSON() ([]byte, error) {
	if md.NotCompared != "" {
		return json.Marshal(struct {
			NotCompared string `json:"not_compared"`
		}{md.NotCompared})
	}
	type cell struct {
		Producer  string            `json:"producer"`
		Consumer  string            `json:"consumer"`
		Outcome   interop.Outcome   `json:"outcome"`
		Error     *engine.Exception `json:"error,omitempty"`
		Device    *interop.Device   `json:"device,omitempty"`
		Lane      interop.Lane      `json:"lane"`
		OtherLane interop.Outcome   `json:"other_lane,omitempty"`
		Remedy    *interop.Remedy   `json:"remedy,omitempty"`
	}
	side := func(c *interop.Cell) *cell {
		if c == nil {
			return nil
		}
		return &cell{c.Producer, c.Consumer, c.Outcome, c.Error, c.Device, c.Lane, c.OtherLane, c.Remedy}
	}
	type array struct {
		Platform string `json:"platform"`
		Memory   string `json:"memory"`
		Class    string `json:"class,omitempty"`
	}
	type change struct {
		Producer string   `json:"producer"`
		Array    array    `json:"array"`
		Consumer string   `json:"consumer"`
		Differs  []string `json:"differs,omitempty"`
		From     *cell    `json:"from"`
		To       *cell    `json:"to"`
	}
	changes := []change{}
	for _, ch := range md.Changes {
		changes = append(changes, change{ch.Producer, array{ch.Array.Platform, ch.Array.Memory, ch.Array.Class}, ch.Consumer, ch.Differs, side(ch.From), side(ch.To)})
	}
	return json.Marshal(struct {
		From    string   `json:"from"`
		To      string   `json:"to"`
		Cells   int      `json:"cells"`
		Changes []change `json:"changes"`
	}{md.From, md.To, md.Cells, changes})
}
