package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"unicode/utf8"

	"github.com/dlroute/dlroute/engine"
	"github.com/dlroute/dlroute/live"
)

func runTest(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := newFlags("test")
	rulesDir := rulesFlag(fs)
	verbose := fs.Bool("v", false, "also print each case that passes")
	engineKind := engineFlag(fs)
	if status, ok := parseFlags(fs, args, stdout, stderr); !ok {
		return status
	}
	if !validEngine(*engineKind, stderr) {
		return 2
	}
	ctx := context.Background()
	cat, deciders, done, err := openDeciders(ctx, *engineKind, *rulesDir, nil, false, stderr)
	if err != nil {
		printError(stderr, err)
		return 1
	}
	defer done()
	passed, failed := 0, 0
	for _, d := range deciders {
		rs, _ := cat.RuleSet(d.Ref())
		for _, c := range rs.Cases() {
			got, err := d.Resolve(ctx, c.Input)
			if err == nil && c.Want.Matches(got) {
				passed++
				if *verbose {
					fmt.Fprint(stdout, shown(fmt.Sprintf("%s: case %s: ok\n", c.Pos, c.Name)))
				}
				continue
			}
			failed++
			gotText := got.String()
			if err != nil {
				gotText = "error: " + firstLine(err.Error())
			}
			fmt.Fprint(stdout, shown(fmt.Sprintf("%s: case %s: got %s, want %s\n", c.Pos, c.Name, gotText, c.Want)))
		}
	}
	fmt.Fprintf(stdout, "%d passed, %d failed\n", passed, failed)
	if failed > 0 {
		return 1
	}
	return 0
}

// shown is text quoted from a rules folder (a message, the line it
// quotes, a case's name) as lint and test print it: each character a
// terminal would act on rather than show (a control character but tab and
// newline, a bidi override such as U+202E, invalid UTF-8) is written as a
// Go escape, \x1b or \u202e, so that a rules folder cannot recolour,
// hide or reorder what the command prints. Positions are quoted by
// engine.Position.String already.
func shown(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, "\\x%02x", s[i])
		case r == '\n' || r == '\t' || strconv.IsPrint(r):
			b.WriteString(s[i : i+size])
		default:
			q := strconv.QuoteRune(r)
			b.WriteString(q[1 : len(q)-1])
		}
		i += size
	}
	return b.String()
}

func firstLine(s string) string {
	first, _, _ := strings.Cut(s, "\n")
	return first
}

func runLint(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := newFlags("lint")
	rulesDir := rulesFlag(fs)
	if status, ok := parseFlags(fs, args, stdout, stderr); !ok {
		return status
	}
	cat, err := loadCatalog(*rulesDir)
	if err == nil {
		// What serve's gate checks too, so that lint passes exactly
		// the rules every host loads: each version's plan, which the
		// decision module (serve --engine wasm) decides with.
		_, err = live.Plans(cat)
	}
	if err != nil {
		list := engine.Errors(err)
		for _, e := range list {
			fmt.Fprintln(stdout, shown(e.Error()))
			if e.Hint != "" {
				fmt.Fprintf(stdout, "hint: %s\n", shown(e.Hint))
			}
		}
		if len(list) == 0 {
			printError(stderr, err)
		}
		fmt.Fprintln(stdout, plural(max(len(list), 1), "error"))
		return 1
	}
	n := 0
	for _, rs := range cat.RuleSets() {
		n++
		fmt.Fprintf(stdout, "%s: %d inputs, %d rules, %d cases\n", rs.Ref(), len(rs.Inputs()), len(rs.RuleIDs()), len(rs.Cases()))
	}
	fmt.Fprintf(stdout, "%d rule-set versions, no errors\n", n)
	return 0
}

func runRules(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := newFlags("rules")
	rulesDir := rulesFlag(fs)
	asJSON := fs.Bool("json", false, "print one JSON object per version: manifest, imports, inputs, rule ids, device types")
	if status, ok := parseFlags(fs, args, stdout, stderr); !ok {
		return status
	}
	cat, err := loadCatalog(*rulesDir)
	if err != nil {
		printError(stderr, err)
		return 1
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		for _, rs := range cat.RuleSets() {
			enc.Encode(struct {
				Ref         string              `json:"ref"`
				Default     bool                `json:"default"`
				Manifest    engine.Manifest     `json:"manifest"`
				Imports     []engine.Import     `json:"imports,omitempty"`
				Inputs      []engine.InputDecl  `json:"inputs"`
				Rules       []string            `json:"rules"`
				DeviceTypes []engine.DeviceType `json:"device_types"`
			}{rs.Ref(), isDefault(cat, rs), rs.Manifest(), rs.Imports(), rs.Inputs(), rs.RuleIDs(), rs.DeviceTypes()})
		}
		return 0
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "RULESET\tMIRRORS\tCOMMITS\tRELEASES\tCHECKED\tDESCRIPTION")
	for _, rs := range cat.RuleSets() {
		m := rs.Manifest()
		ref := rs.Ref()
		if isDefault(cat, rs) {
			ref += " (default)"
		}
		up := m.Mirrors.Project
		if m.Mirrors.Commit != "" {
			up += "@" + m.Mirrors.Commit
		}
		if m.Mirrors.Date != "" {
			up += " " + m.Mirrors.Date
		}
		commits, releases, checked := "-", "none", "-"
		if c := m.Mirrors.Commits; c != nil {
			commits = c.String()
		}
		if r := m.Mirrors.Releases; r != nil {
			releases, checked = r.String(), r.CheckedString()
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", ref, up, commits, releases, checked, m.Description)
	}
	tw.Flush()
	return 0
}

// isDefault reports whether rs is what its bare name resolves to.
func isDefault(cat *engine.Catalog, rs *engine.RuleSet) bool {
	newest, err := cat.RuleSet(rs.Name())
	return err == nil && newest == rs
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}
