package main

// One corpus, every host: the inputs of every rule set's tests.yaml, the
// extra inputs in testdata/corpus/ and a few generated at the limits go
// through `dlroute resolve --json` natively (the reference), and through
// every other host (hosts_test.go: wazero, Node.js, the browser page, the
// C library's example and the Python package);
// each host's output must be the
// native output byte for byte, line by line. A known difference is a line
// of testdata/corpus/exceptions.txt with its reason; an exception that no
// longer occurs fails the test, so the file cannot rot.

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/dlroute/dlroute/engine"
	"github.com/dlroute/dlroute/internal/testenv"
	"github.com/dlroute/dlroute/rules"
)

// corpusDir is testdata/corpus at the repository root.
const corpusDir = "../../testdata/corpus"

// corpusLine is one input line and where it comes from, as an exception
// names it: "rules/jax/v3/tests.yaml:12", "testdata/corpus/all.jsonl:5",
// "generated:version-over-MaxStringLen".
type corpusLine struct {
	origin string
	data   []byte
}

// ruleSetCorpus is what one rule-set version is asked: its stdin.
type ruleSetCorpus struct {
	ref   string
	lines []corpusLine
}

// has reports whether one of c's lines comes from origin.
func (c ruleSetCorpus) has(origin string) bool {
	for _, l := range c.lines {
		if l.origin == origin {
			return true
		}
	}
	return false
}

func (c ruleSetCorpus) stdin() []byte {
	var b bytes.Buffer
	for _, l := range c.lines {
		b.Write(l.data)
		b.WriteByte('\n')
	}
	return b.Bytes()
}

// loadCorpus builds the corpus of every embedded rule-set version: its
// cases' inputs, testdata/corpus/all.jsonl, testdata/corpus/<name>.jsonl
// and the generated lines.
func loadCorpus(t *testing.T) []ruleSetCorpus {
	t.Helper()
	cat, err := engine.Load(rules.FS, engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var out []ruleSetCorpus
	for _, rs := range cat.RuleSets() {
		c := ruleSetCorpus{ref: rs.Ref()}
		for _, tc := range rs.Cases() {
			var b bytes.Buffer
			enc := json.NewEncoder(&b)
			enc.SetEscapeHTML(false)
			if err := enc.Encode(tc.Input); err != nil {
				t.Fatalf("%s: %v", tc.Pos, err)
			}
			c.lines = append(c.lines, corpusLine{fmt.Sprintf("%s:%d", tc.Pos.File, tc.Pos.Line), bytes.TrimSuffix(b.Bytes(), []byte("\n"))})
		}
		name, _, _ := strings.Cut(rs.Ref(), "@")
		for _, file := range []string{"all.jsonl", name + ".jsonl"} {
			c.lines = append(c.lines, readCorpusFile(t, file)...)
		}
		c.lines = append(c.lines, generatedLines(rs.Ref() == "jax@v3")...)
		out = append(out, c)
	}
	return out
}

// readCorpusFile reads a file of testdata/corpus, one input per line, the
// bytes as they are (a "\r" before the "\n" included).
func readCorpusFile(t *testing.T, name string) []corpusLine {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(corpusDir, name))
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	if len(data) > 0 && data[len(data)-1] != '\n' {
		t.Fatalf("testdata/corpus/%s does not end in a newline", name)
	}
	var out []corpusLine
	for i, line := range bytes.Split(data[:len(data)-1], []byte("\n")) {
		out = append(out, corpusLine{fmt.Sprintf("testdata/corpus/%s:%d", name, i+1), line})
	}
	return out
}

// generatedLines are inputs at the limits, too large to keep in a file.
// The lines at the command's own line limit, which no rule set sees, are
// 4 MiB each: they go to one rule set (withLongLines), not to every one.
func generatedLines(withLongLines bool) []corpusLine {
	gpu := func(version string) []byte {
		b, _ := json.Marshal(version)
		return []byte(`{"platform":"gpu","platform_version":` + string(b) + `,"local_hardware_id":0}`)
	}
	atLimit, _ := gpuInputOfLen(maxLineLen)
	overLimit, _ := gpuInputOfLen(maxLineLen + 1)
	lines := []corpusLine{
		{"generated:version-of-MaxStringLen", gpu(strings.Repeat("x", engine.MaxStringLen))},
		{"generated:version-over-MaxStringLen", gpu(strings.Repeat("x", engine.MaxStringLen+1))},
		{"generated:cuda-version-of-MaxStringLen", gpu("cuda " + strings.Repeat("9", engine.MaxStringLen-5))},
		{"generated:multibyte-version-over-MaxStringLen", gpu(strings.Repeat("é", engine.MaxStringLen/2) + "x")},
		{"generated:escaped-version-of-MaxStringLen", []byte(`{"platform":"gpu","platform_version":"` + strings.Repeat(`\u00e9`, engine.MaxStringLen/2) + `","local_hardware_id":0}`)},
		{"generated:nesting-over-the-decoder-limit", []byte(`{"platform":` + strings.Repeat("[", 10001) + strings.Repeat("]", 10001) + `}`)},
	}
	if withLongLines {
		lines = append(lines,
			corpusLine{"generated:line-of-maxLineLen", []byte(atLimit)},
			corpusLine{"generated:line-over-maxLineLen", []byte(overLimit)},
			corpusLine{"generated:line-over-maxLineLen-with-cr", []byte(overLimit[:len(overLimit)-1] + "\r")},
		)
	}
	return append(lines, corpusLine{"generated:after-the-long-lines", gpu("cuda 12030")})
}

// exception is a known difference: host answers ref's line from origin
// otherwise than the native engine, for reason.
type exception struct {
	host, ref, origin, reason string
	at                        string // exceptions.txt:N
}

func (e exception) key() string { return e.host + " " + e.ref + " " + e.origin }

// readExceptions reads testdata/corpus/exceptions.txt: "# comments", blank
// lines, and lines of HOST REF ORIGIN REASON..., REF "*" for every rule
// set whose corpus has the line.
func readExceptions(t *testing.T) map[string]*exception {
	t.Helper()
	f, err := os.Open(filepath.Join(corpusDir, "exceptions.txt"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string]*exception{}
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
		e := &exception{host: f[0], ref: f[1], origin: f[2], reason: strings.Join(f[3:], " "), at: at}
		if _, dup := out[e.key()]; dup {
			t.Fatalf("%s: %s is listed twice", at, e.key())
		}
		out[e.key()] = e
	}
	return out
}

// answers is what one host wrote for a rule set's stdin.
type answers struct {
	lines  [][]byte
	status int
}

func splitAnswers(stdout []byte, status int) answers {
	a := answers{status: status}
	if len(stdout) > 0 {
		a.lines = bytes.Split(bytes.TrimSuffix(stdout, []byte("\n")), []byte("\n"))
	}
	return a
}

// lookup finds the exception for host's answer to ref's line from
// origin: listed for ref, or for every rule set ("*").
func lookup(exceptions map[string]*exception, host, ref, origin string) *exception {
	if e := exceptions[host+" "+ref+" "+origin]; e != nil {
		return e
	}
	return exceptions[host+" * "+origin]
}

// compareHost checks a host's answers to c against the native ones, line
// by line, and marks the exceptions it uses, by exception and rule set.
func compareHost(t *testing.T, host string, c ruleSetCorpus, want, got answers, used map[string]map[string]bool, exceptions map[string]*exception) {
	t.Helper()
	if len(got.lines) != len(c.lines) {
		t.Errorf("%s %s: %d output lines for %d inputs (native: %d); the last: %s", host, c.ref, len(got.lines), len(c.lines), len(want.lines), abbreviate(string(lastLine(got.lines))))
		return
	}
	same := true
	for i, l := range c.lines {
		if bytes.Equal(got.lines[i], want.lines[i]) {
			continue
		}
		same = false
		key := host + " " + c.ref + " " + l.origin
		if e := lookup(exceptions, host, c.ref, l.origin); e != nil {
			if used[e.key()] == nil {
				used[e.key()] = map[string]bool{}
			}
			used[e.key()][c.ref] = true
			continue
		}
		t.Errorf("%s %s %s: resolve(%s)\n got %s\nwant %s (native)\nhint: fix the host, or list the difference with its reason in testdata/corpus/exceptions.txt:\n%s <reason>",
			host, c.ref, l.origin, abbreviate(string(l.data)), abbreviate(string(got.lines[i])), abbreviate(string(want.lines[i])), key)
	}
	if same && got.status != want.status {
		t.Errorf("%s %s: exit status %d, want %d (native)", host, c.ref, got.status, want.status)
	}
}

func lastLine(lines [][]byte) []byte {
	if len(lines) == 0 {
		return nil
	}
	return lines[len(lines)-1]
}

func TestCorpus(t *testing.T) {
	corpus := loadCorpus(t)
	exceptions := readExceptions(t)
	// The native answers, made once a host runs (under -short none does).
	native := sync.OnceValues(func() ([]answers, error) {
		native := make([]answers, len(corpus))
		for i, c := range corpus {
			var stdout, stderr bytes.Buffer
			status := run([]string{"resolve", "--json", "--ruleset", c.ref}, bytes.NewReader(c.stdin()), &stdout, &stderr)
			native[i] = splitAnswers(stdout.Bytes(), status)
			if len(native[i].lines) != len(c.lines) {
				return nil, fmt.Errorf("native %s: %d output lines for %d inputs; stderr: %s", c.ref, len(native[i].lines), len(c.lines), stderr.String())
			}
		}
		return native, nil
	})
	for _, e := range exceptions {
		if hostNamed(e.host) == nil {
			t.Errorf("%s: no host is called %q (the hosts: %s)", e.at, e.host, strings.Join(hostNames(), ", "))
		}
	}
	for _, h := range corpusHosts {
		t.Run(h.name, func(t *testing.T) {
			testenv.Short(t, "the corpus on the "+h.name+" host")
			answer := h.start(t, corpus) // skips where the host cannot run here
			want, err := native()
			if err != nil {
				t.Fatal(err)
			}
			used := map[string]map[string]bool{}
			for i, c := range corpus {
				// A subtest each, so the test command shows each version
				// as it ends (the wazero host takes minutes in all).
				t.Run(c.ref, func(t *testing.T) { compareHost(t, h.name, c, want[i], answer(t, c), used, exceptions) })
			}
			for key, e := range exceptions {
				if e.host != h.name {
					continue
				}
				for _, c := range corpus {
					if (e.ref == c.ref || e.ref == "*" && c.has(e.origin)) && !used[key][c.ref] {
						t.Errorf("%s: %s no longer differs from native for %s (%s); remove the line, or name the rule sets it still holds for", e.at, key, c.ref, e.reason)
					}
				}
			}
		})
	}
}
