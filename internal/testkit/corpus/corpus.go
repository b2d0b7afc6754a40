// Package corpus is one corpus of inputs that every host must answer as
// the native engine does: the inputs of every rule set's tests.yaml, the
// extra inputs in testdata/corpus/ and a few generated at the limits. A
// host's answers are `dlroute resolve --json`'s lines, compared with the
// native ones byte for byte, line by line. A known difference is a line
// of testdata/corpus/exceptions.txt with its reason; an exception that no
// longer occurs fails the test, so the file cannot rot.
//
// The hosts are run by three tests: cmd/dlroute's TestCorpus (wazero,
// the C library's example) and, in the e2e tier, e2e/corpus's TestCorpus
// (Node.js, the Python package) and e2e/playground's TestCorpusInBrowser
// (the playground's page in headless Chromium). All read the corpus and
// the exceptions here.
package corpus

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/dlroute/dlroute/engine"
	"github.com/dlroute/dlroute/internal/contract"
	"github.com/dlroute/dlroute/rules"
)

// Hosts are the names of every host some test answers the corpus with,
// as exceptions.txt names them.
var Hosts = []string{"wazero", "node", "browser", "c", "python"}

// Line is one input line and where it comes from, as an exception names
// it: "rules/jax/v3/tests.yaml:12", "testdata/corpus/all.jsonl:5",
// "generated:version-over-MaxStringLen".
type Line struct {
	Origin string
	Data   []byte
}

// RuleSet is what one rule-set version is asked.
type RuleSet struct {
	Ref   string
	Lines []Line
}

// Has reports whether one of c's lines comes from origin.
func (c RuleSet) Has(origin string) bool {
	for _, l := range c.Lines {
		if l.Origin == origin {
			return true
		}
	}
	return false
}

// Stdin is c's lines as `dlroute resolve --json` reads them.
func (c RuleSet) Stdin() []byte {
	var b bytes.Buffer
	for _, l := range c.Lines {
		b.Write(l.Data)
		b.WriteByte('\n')
	}
	return b.Bytes()
}

// Load builds the corpus of every embedded rule-set version: its cases'
// inputs, testdata/corpus/all.jsonl, testdata/corpus/<name>.jsonl and the
// generated lines. root is the repository's root, from the test's
// directory.
func Load(t testing.TB, root string) []RuleSet {
	t.Helper()
	cat, err := engine.Load(rules.FS, engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var out []RuleSet
	for _, rs := range cat.RuleSets() {
		c := RuleSet{Ref: rs.Ref()}
		for _, tc := range rs.Cases() {
			var b bytes.Buffer
			enc := json.NewEncoder(&b)
			enc.SetEscapeHTML(false)
			if err := enc.Encode(tc.Input); err != nil {
				t.Fatalf("%s: %v", tc.Pos, err)
			}
			c.Lines = append(c.Lines, Line{fmt.Sprintf("%s:%d", tc.Pos.File, tc.Pos.Line), bytes.TrimSuffix(b.Bytes(), []byte("\n"))})
		}
		name, _, _ := strings.Cut(rs.Ref(), "@")
		for _, file := range []string{"all.jsonl", name + ".jsonl"} {
			c.Lines = append(c.Lines, readFile(t, root, file)...)
		}
		c.Lines = append(c.Lines, generatedLines(rs.Ref() == "jax@v3")...)
		out = append(out, c)
	}
	return out
}

// readFile reads a file of testdata/corpus, one input per line, the
// bytes as they are (a "\r" before the "\n" included).
func readFile(t testing.TB, root, name string) []Line {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(root, "testdata", "corpus", name))
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	if len(data) > 0 && data[len(data)-1] != '\n' {
		t.Fatalf("testdata/corpus/%s does not end in a newline", name)
	}
	var out []Line
	for i, line := range bytes.Split(data[:len(data)-1], []byte("\n")) {
		out = append(out, Line{fmt.Sprintf("testdata/corpus/%s:%d", name, i+1), line})
	}
	return out
}

// gpuInputOfLen is a GPU input line of n bytes, its platform_version
// padded with x.
func gpuInputOfLen(n int) string {
	const prefix, suffix = `{"platform":"gpu","platform_version":"`, `","local_hardware_id":0}`
	return prefix + strings.Repeat("x", n-len(prefix)-len(suffix)) + suffix
}

// generatedLines are inputs at the limits, too large to keep in a file.
// The lines at the command's own line limit (contract.MaxLineLen), which no
// rule set sees, are 4 MiB each: they go to one rule set
// (withLongLines), not to every one.
func generatedLines(withLongLines bool) []Line {
	gpu := func(version string) []byte {
		b, _ := json.Marshal(version)
		return []byte(`{"platform":"gpu","platform_version":` + string(b) + `,"local_hardware_id":0}`)
	}
	atLimit, overLimit := gpuInputOfLen(contract.MaxLineLen), gpuInputOfLen(contract.MaxLineLen+1)
	lines := []Line{
		{"generated:version-of-MaxStringLen", gpu(strings.Repeat("x", engine.MaxStringLen))},
		{"generated:version-over-MaxStringLen", gpu(strings.Repeat("x", engine.MaxStringLen+1))},
		{"generated:cuda-version-of-MaxStringLen", gpu("cuda " + strings.Repeat("9", engine.MaxStringLen-5))},
		{"generated:multibyte-version-over-MaxStringLen", gpu(strings.Repeat("é", engine.MaxStringLen/2) + "x")},
		{"generated:escaped-version-of-MaxStringLen", []byte(`{"platform":"gpu","platform_version":"` + strings.Repeat(`\u00e9`, engine.MaxStringLen/2) + `","local_hardware_id":0}`)},
		{"generated:nesting-over-the-decoder-limit", []byte(`{"platform":` + strings.Repeat("[", 10001) + strings.Repeat("]", 10001) + `}`)},
	}
	if withLongLines {
		lines = append(lines,
			Line{"generated:line-of-maxLineLen", []byte(atLimit)},
			Line{"generated:line-over-maxLineLen", []byte(overLimit)},
			Line{"generated:line-over-maxLineLen-with-cr", []byte(overLimit[:len(overLimit)-1] + "\r")},
		)
	}
	return append(lines, Line{"generated:after-the-long-lines", gpu("cuda 12030")})
}

// Exception is a known difference: Host answers Ref's line from Origin
// otherwise than the native engine, for Reason.
type Exception struct {
	Host, Ref, Origin, Reason string
	At                        string // exceptions.txt:N
}

// Key is the exception's host, rule set and origin.
func (e Exception) Key() string { return e.Host + " " + e.Ref + " " + e.Origin }

// ReadExceptions reads testdata/corpus/exceptions.txt under root: "#
// comments", blank lines, and lines of HOST REF ORIGIN REASON..., REF "*"
// for every rule set whose corpus has the line. A line naming no host of
// Hosts fails t.
func ReadExceptions(t testing.TB, root string) map[string]*Exception {
	t.Helper()
	f, err := os.Open(filepath.Join(root, "testdata", "corpus", "exceptions.txt"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string]*Exception{}
	s := bufio.NewScanner(f)
	for n := 1; s.Scan(); n++ {
		line := strings.TrimSpace(s.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Fields(line)
		at := fmt.Sprintf("testdata/corpus/exceptions.txt:%d", n)
		if len(f) < 4 {
			t.Fatalf("%s: want HOST REF ORIGIN REASON, got %q", at, line)
		}
		e := &Exception{Host: f[0], Ref: f[1], Origin: f[2], Reason: strings.Join(f[3:], " "), At: at}
		if _, dup := out[e.Key()]; dup {
			t.Fatalf("%s: %s is listed twice", at, e.Key())
		}
		if !slices.Contains(Hosts, e.Host) {
			t.Errorf("%s: no host is called %q (the hosts: %s)", at, e.Host, strings.Join(Hosts, ", "))
		}
		out[e.Key()] = e
	}
	return out
}

// Answers is what one host wrote for a rule set's stdin.
type Answers struct {
	Lines  [][]byte
	Status int
}

// SplitAnswers is stdout's lines, with the exit status.
func SplitAnswers(stdout []byte, status int) Answers {
	a := Answers{Status: status}
	if len(stdout) > 0 {
		a.Lines = bytes.Split(bytes.TrimSuffix(stdout, []byte("\n")), []byte("\n"))
	}
	return a
}

// lookup finds the exception for host's answer to ref's line from
// origin: listed for ref, or for every rule set ("*").
func lookup(exceptions map[string]*Exception, host, ref, origin string) *Exception {
	if e := exceptions[host+" "+ref+" "+origin]; e != nil {
		return e
	}
	return exceptions[host+" * "+origin]
}

// Used is the exceptions a host's answers used: by exception key, the
// rule sets it held for.
type Used map[string]map[string]bool

// Compare checks a host's answers to c against the native ones, line by
// line, and marks in used the exceptions it uses.
func Compare(t testing.TB, host string, c RuleSet, want, got Answers, used Used, exceptions map[string]*Exception) {
	t.Helper()
	if len(got.Lines) != len(c.Lines) {
		t.Errorf("%s %s: %d output lines for %d inputs (native: %d); the last: %s", host, c.Ref, len(got.Lines), len(c.Lines), len(want.Lines), Abbreviate(string(lastLine(got.Lines))))
		return
	}
	same := true
	for i, l := range c.Lines {
		if bytes.Equal(got.Lines[i], want.Lines[i]) {
			continue
		}
		same = false
		key := host + " " + c.Ref + " " + l.Origin
		if e := lookup(exceptions, host, c.Ref, l.Origin); e != nil {
			if used[e.Key()] == nil {
				used[e.Key()] = map[string]bool{}
			}
			used[e.Key()][c.Ref] = true
			continue
		}
		t.Errorf("%s %s %s: resolve(%s)\n got %s\nwant %s (native)\nhint: fix the host, or list the difference with its reason in testdata/corpus/exceptions.txt:\n%s <reason>",
			host, c.Ref, l.Origin, Abbreviate(string(l.Data)), Abbreviate(string(got.Lines[i])), Abbreviate(string(want.Lines[i])), key)
	}
	if same && got.Status != want.Status {
		t.Errorf("%s %s: exit status %d, want %d (native)", host, c.Ref, got.Status, want.Status)
	}
}

// CheckUsed fails t for each of host's exceptions that no longer occurs:
// listed for a rule set of the corpus that Compare did not use it for.
func CheckUsed(t testing.TB, host string, corpus []RuleSet, used Used, exceptions map[string]*Exception) {
	t.Helper()
	for key, e := range exceptions {
		if e.Host != host {
			continue
		}
		for _, c := range corpus {
			if (e.Ref == c.Ref || e.Ref == "*" && c.Has(e.Origin)) && !used[key][c.Ref] {
				t.Errorf("%s: %s no longer differs from native for %s (%s); remove the line, or name the rule sets it still holds for", e.At, key, c.Ref, e.Reason)
			}
		}
	}
}

func lastLine(lines [][]byte) []byte {
	if len(lines) == 0 {
		return nil
	}
	return lines[len(lines)-1]
}

// Abbreviate keeps a failure message short when a line is megabytes.
func Abbreviate(s string) string {
	if len(s) > 300 {
		return fmt.Sprintf("%s...(%d bytes)...%s", s[:150], len(s), s[len(s)-150:])
	}
	return s
}
