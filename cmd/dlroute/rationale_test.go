package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/dlroute/dlroute/internal/testkit/testenv"
)

// The reasons' budget: every RATIONALE.md together holds at most
// rationaleLinesPerKGo lines per 1,000 lines of non-test Go and C (issue 40:
// reasons that outgrow their code are history, which is the log's job).
// .ci/run runs these tests as its own step.
const rationaleLinesPerKGo = 45

// trackedFiles is the repository's files that git tracks and match one
// of patterns, relative to its root.
func trackedFiles(t *testing.T, patterns ...string) []string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"ls-files", "--"}, patterns...)...)
	cmd.Dir = "../.."
	out, err := cmd.Output()
	if err != nil {
		testenv.Missing(t, fmt.Sprintf("git ls-files (git, in a clone of the repository): %v", err))
	}
	return strings.Fields(string(out))
}

// rationaleFiles is every RATIONALE.md, by its path, with its contents.
func rationaleFiles(t *testing.T) map[string]string {
	t.Helper()
	files := map[string]string{}
	for _, p := range trackedFiles(t, "RATIONALE.md", "*/RATIONALE.md") {
		data, err := os.ReadFile(filepath.Join("../..", p))
		if err != nil {
			t.Fatal(err)
		}
		files[p] = string(data)
	}
	if files["RATIONALE.md"] == "" {
		t.Fatal("no root RATIONALE.md")
	}
	return files
}

// TestRationaleFitsItsBudget: every RATIONALE.md together is at most
// rationaleLinesPerKGo lines per 1,000 lines of non-test Go and C (the
// decision module and the C library are code whose choices need reasons
// too; tests and test data are not counted).
func TestRationaleFitsItsBudget(t *testing.T) {
	goLines := 0
	for _, p := range trackedFiles(t, "*.go", "*.c", "*.h") {
		if strings.HasSuffix(p, "_test.go") || strings.Contains(p, "/testdata/") {
			continue
		}
		data, err := os.ReadFile(filepath.Join("../..", p))
		if err != nil {
			t.Fatal(err)
		}
		goLines += bytes.Count(data, []byte("\n"))
	}
	why := 0
	for _, text := range rationaleFiles(t) {
		why += strings.Count(text, "\n")
	}
	if limit := goLines * rationaleLinesPerKGo / 1000; why > limit {
		t.Errorf("the RATIONALE.md files hold %d lines for %d lines of Go and C; at most %d: shorten entries, move figures to BENCHMARKS.md, history to the log", why, goLines, limit)
	}
}

// TestRationaleIndexListsEveryFile: the root RATIONALE.md links every
// other RATIONALE.md, and only those there are.
func TestRationaleIndexListsEveryFile(t *testing.T) {
	files := rationaleFiles(t)
	linked := map[string]bool{}
	for _, m := range regexp.MustCompile(`\]\(([\w./-]+/RATIONALE\.md)\)`).FindAllStringSubmatch(files["RATIONALE.md"], -1) {
		linked[m[1]] = true
		if _, ok := files[m[1]]; !ok {
			t.Errorf("RATIONALE.md links %s, which is not a file of the repository", m[1])
		}
	}
	for path := range files {
		if path != "RATIONALE.md" && !linked[path] {
			t.Errorf("RATIONALE.md's index does not link %s", path)
		}
	}
}

// figure is a measured figure: a number with a unit of time or size, a
// percentage or a ratio ("30x").
var figure = regexp.MustCompile(`\b\d[\d,.]*(?:\s?(?:ns|µs|us|ms|s|sec|seconds?|min|minutes?|h|hours?|days?|B|bytes?|KB|KiB|MB|MiB|GB|GiB|TB)\b|\s?%|x\b)`)

// codeSpan is Markdown's inline code: a flag, a command, a constant.
var codeSpan = regexp.MustCompile("`[^`]*`")

// figures returns the measured figures in a paragraph of RATIONALE.md. A
// limit's size is not one when it is written as the constant's value,
// "`MaxRuleFileSize` = 1 MiB", nor is what a code span holds (a flag's
// argument: `-timeout 30m`).
func figures(paragraph string) []string {
	text := codeSpan.ReplaceAllString(paragraph, "`…`")
	var found []string
	for _, m := range figure.FindAllStringIndex(text, -1) {
		if strings.HasSuffix(strings.TrimRight(text[:m[0]], " "), "=") {
			continue
		}
		found = append(found, text[m[0]:m[1]])
	}
	return found
}

func TestRationaleFigureFindsMeasurementsOnly(t *testing.T) {
	for _, c := range []struct {
		text string
		want string
	}{
		{"6.4 MB and 8.7 ms to start, 30x slower, 45% of it", "[6.4 MB 8.7 ms 30x 45%]"},
		{"a 24\nMB module", "[24\nMB]"},
		{"`MaxRuleFileSize` = 1 MiB, `-timeout 30m`, `--max-in-flight` = 32 MiB", "[]"},
		{"jax@v3, dlpack.h 1.1's flags, Python 3.12 stacks, bfloat16, 0x1f, issue 35, 64 dimensions", "[]"},
	} {
		if got := fmt.Sprint(figures(c.text)); got != c.want {
			t.Errorf("figures(%q) = %s, want %s", c.text, got, c.want)
		}
	}
}

// TestRationaleHoldsNoFigure: no RATIONALE.md states a measured figure;
// what things cost is in BENCHMARKS.md, with the command that measured it.
func TestRationaleHoldsNoFigure(t *testing.T) {
	for path, text := range rationaleFiles(t) {
		line := 1
		for _, para := range strings.Split(text, "\n\n") {
			for _, f := range figures(para) {
				t.Errorf("%s:%d: %q is a measured figure: name the BENCHMARKS.md section that holds it, or write a limit as `Name` = value", path, line, f)
			}
			line += strings.Count(para, "\n") + 2
		}
	}
}

// citation is a reference to an entry: RATIONALE.md, "Why ...?", with the
// file's path when the entry is not the root's.
var citation = regexp.MustCompile(`([\w./-]*RATIONALE\.md)(?:'s|,|:)?\s+\(?"(Why [^"]*\?)"`)

// commentMark is what starts a comment line, cut so that a citation
// wrapped across comment lines reads as one.
var commentMark = regexp.MustCompile(`(?m)^\s*(?://|#:?|\*|-)?\s*`)

// normalTitle is a title as a citation may write it: without code spans'
// backticks, with single spaces.
func normalTitle(s string) string {
	return strings.Join(strings.Fields(strings.ReplaceAll(s, "`", "")), " ")
}

// TestRationaleCitationsResolve: every citation of an entry in the
// source, the docs and the RATIONALE.md files names an entry the file it
// names holds ("..." in a title stands for the rest of it).
func TestRationaleCitationsResolve(t *testing.T) {
	titles := map[string][]string{} // file -> its entries' titles, normalized
	for path, text := range rationaleFiles(t) {
		for _, line := range strings.Split(text, "\n") {
			if strings.HasPrefix(line, "## Why ") {
				titles[path] = append(titles[path], normalTitle(strings.TrimPrefix(line, "## ")))
			}
		}
	}
	n := 0
	for _, p := range trackedFiles(t, "*.go", "*.md", "*.js", "*.mjs", "*.py", "*.c", "*.h", ".ci/run") {
		data, err := os.ReadFile(filepath.Join("../..", p))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Contains(data, []byte("RATIONALE.md")) {
			continue
		}
		text := commentMark.ReplaceAllString(string(data), "")
		for _, m := range citation.FindAllStringSubmatch(text, -1) {
			n++
			file, title := m[1], normalTitle(m[2])
			if _, ok := titles[file]; !ok {
				t.Errorf("%s cites %s, which is not a RATIONALE.md of the repository (the path is from the root)", p, file)
				continue
			}
			if !hasTitle(titles[file], title) {
				t.Errorf("%s cites %q in %s, which has no such entry", p, title, file)
			}
		}
	}
	if n < 20 {
		t.Errorf("found %d citations; the pattern no longer matches how the source cites entries", n)
	}
}

// hasTitle reports whether title, whose "..." stands for any text, is
// one of titles.
func hasTitle(titles []string, title string) bool {
	prefix, suffix, cut := strings.Cut(title, "...")
	for _, have := range titles {
		if have == title || cut && strings.HasPrefix(have, strings.TrimSpace(prefix)) && strings.HasSuffix(have, strings.TrimSpace(suffix)) {
			return true
		}
	}
	return false
}
