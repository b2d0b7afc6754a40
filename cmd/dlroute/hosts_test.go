package main

// The hosts the corpus (corpus_test.go) runs through besides the native
// engine: the module through wazero (`dlroute resolve --json --engine
// wasm`), through Node.js (wasm/node/resolve.mjs), and in the browser (the
// playground's window.dlroute.resolveJSON, in headless Chromium).

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/dlroute/dlroute/engine"
	"github.com/dlroute/dlroute/internal/wasmbuild"
)

// corpusHost answers a rule set's corpus as `dlroute resolve --json`
// would. start prepares it, or skips the test where it cannot run here,
// and returns its answering function.
type corpusHost struct {
	name  string
	start func(t *testing.T) func(t *testing.T, c ruleSetCorpus) answers
}

var corpusHosts = []corpusHost{
	{"wazero", startWazero},
	{"node", startNode},
	{"browser", startBrowser},
}

func hostNamed(name string) *corpusHost {
	for i := range corpusHosts {
		if corpusHosts[i].name == name {
			return &corpusHosts[i]
		}
	}
	return nil
}

func hostNames() []string {
	var out []string
	for _, h := range corpusHosts {
		out = append(out, h.name)
	}
	return out
}

func startWazero(t *testing.T) func(*testing.T, ruleSetCorpus) answers {
	return func(t *testing.T, c ruleSetCorpus) answers {
		var stdout, stderr bytes.Buffer
		status := run([]string{"resolve", "--json", "--engine", "wasm", "--ruleset", c.ref}, bytes.NewReader(c.stdin()), &stdout, &stderr)
		return splitAnswers(stdout.Bytes(), status)
	}
}

func startNode(t *testing.T) func(*testing.T, ruleSetCorpus) answers {
	node := nodeBinary(t)
	module := moduleFile(t)
	return func(t *testing.T, c ruleSetCorpus) answers {
		cmd := exec.CommandContext(context.Background(), node, "../../wasm/node/resolve.mjs", "--ruleset", c.ref)
		cmd.Env = append(os.Environ(), wasmbuild.EnvModule+"="+module)
		cmd.Stdin = bytes.NewReader(c.stdin())
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		var exit *exec.ExitError
		if err != nil && !errors.As(err, &exit) {
			t.Fatalf("node resolve.mjs --ruleset %s: %v", c.ref, err)
		}
		if stderr.Len() > 0 {
			t.Errorf("node resolve.mjs --ruleset %s wrote to stderr:\n%s", c.ref, stderr.String())
		}
		return splitAnswers(stdout.Bytes(), cmd.ProcessState.ExitCode())
	}
}

// nodeBinary finds node, or skips: only where it is absent.
func nodeBinary(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not installed, so the Node.js host does not run (apt-get install -y nodejs; .ci/run installs it)")
	}
	return p
}

// moduleFile writes the module built from this checkout to a file of the
// test's own, which no other build's cache pruning can remove.
func moduleFile(t *testing.T) string {
	t.Helper()
	data, _, err := wasmbuild.Module(context.Background(), wasmbuild.Options{Progress: os.Stderr})
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "dlroute.wasm")
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// startBrowser opens the playground in headless Chromium (browser_test.go;
// it skips where chromium is absent). The page decides each line with
// window.dlroute.resolveJSON; the command's own answerLines reads the lines
// and writes the answers, as it does for the other engines, so what is
// compared is the page's decisions and error objects. The page's API takes
// a JavaScript string: a line that is not UTF-8 reaches it with U+FFFD in
// place of its bad bytes (exceptions.txt).
func startBrowser(t *testing.T) func(*testing.T, ruleSetCorpus) answers {
	p := page{t, browser(t)}
	p.open(servePlayground(t))
	return func(_ *testing.T, c ruleSetCorpus) answers {
		lines := readLines(c.stdin())
		js, _ := json.Marshal(map[string]any{"ref": c.ref, "lines": lines})
		type pageAnswer struct{ Status, Output string }
		got := eval[[]pageAnswer](p, fmt.Sprintf(`(() => { const x = %s; return x.lines.map((l) => window.dlroute.resolveJSON(x.ref, l)); })()`, js))
		next := 0
		decide := func(_ context.Context, line []byte) ([]byte, error) {
			if next >= len(got) {
				return nil, fmt.Errorf("the page answered %d lines; asked for more", len(got))
			}
			a := got[next]
			next++
			if a.Status == "ok" {
				return []byte(a.Output), nil
			}
			var e engine.Error
			if json.Unmarshal([]byte(a.Output), &e) != nil || e.Code == "" {
				return nil, fmt.Errorf("the page answered %s: %s", a.Status, a.Output)
			}
			return nil, &e
		}
		var stdout bytes.Buffer
		status := answerLines(context.Background(), decide, bytes.NewReader(c.stdin()), &stdout)
		return splitAnswers(stdout.Bytes(), status)
	}
}

// readLines is every line answerLines hands its decide function: the lines
// of stdin as readLine cuts them, less those too long to read.
func readLines(stdin []byte) []string {
	r := bufio.NewReaderSize(bytes.NewReader(stdin), 64<<10)
	var out []string
	for {
		line, tooLong, err := readLine(r, maxLineLen)
		if err != nil && len(line) == 0 && !tooLong {
			return out
		}
		if !tooLong {
			out = append(out, string(line))
		}
		if err != nil {
			return out
		}
	}
}
