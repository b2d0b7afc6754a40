package playground

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"testing"

	"github.com/dlroute/dlroute/engine"
	"github.com/dlroute/dlroute/internal/contract"
	"github.com/dlroute/dlroute/internal/testkit/corpus"
	"github.com/dlroute/dlroute/internal/testkit/testenv"
)

// TestCorpusInBrowser is the corpus (internal/testkit/corpus) on the browser
// host: the playground's page in headless Chromium decides each line
// with window.dlroute.resolveJSON, and its answers, written as `dlroute
// resolve --json` writes a line's answer (internal/contract), must be the
// binary's native answers byte for byte, but for the browser's lines of
// testdata/corpus/exceptions.txt. The page's API takes a JavaScript
// string: a line that is not UTF-8 reaches it with U+FFFD in place of its
// bad bytes (exceptions.txt).
func TestCorpusInBrowser(t *testing.T) {
	testenv.Short(t, "the corpus on the browser host")
	p := page{t, browser(t)}
	lines := corpus.Load(t, repoRoot)
	exceptions := corpus.ReadExceptions(t, repoRoot)
	p.open(servePlayground(t))
	used := corpus.Used{}
	for _, c := range lines {
		// A subtest each, so the test command shows each version as it ends.
		t.Run(c.Ref, func(t *testing.T) {
			corpus.Compare(t, "browser", c, native(t, c), pageAnswers(t, p, c), used, exceptions)
		})
	}
	corpus.CheckUsed(t, "browser", lines, used, exceptions)
}

// native is what `dlroute resolve --json --ruleset REF` answers for c.
func native(t *testing.T, c corpus.RuleSet) corpus.Answers {
	t.Helper()
	cmd := exec.Command(dlroute(t), "resolve", "--json", "--ruleset", c.Ref)
	cmd.Stdin = bytes.NewReader(c.Stdin())
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatalf("dlroute resolve --json: %v", err)
	}
	a := corpus.SplitAnswers(stdout.Bytes(), cmd.ProcessState.ExitCode())
	if len(a.Lines) != len(c.Lines) {
		t.Fatalf("native %s: %d output lines for %d inputs; stderr: %s", c.Ref, len(a.Lines), len(c.Lines), stderr.String())
	}
	return a
}

// pageAnswers asks the page for each of c's lines that `dlroute resolve
// --json` would decide (a line over contract.MaxLineLen it refuses
// unread), and writes each answer as the command writes that line's.
func pageAnswers(t *testing.T, p page, c corpus.RuleSet) corpus.Answers {
	t.Helper()
	var ask []string
	for _, l := range c.Lines {
		if line := bytes.TrimSuffix(l.Data, []byte("\r")); len(line) <= contract.MaxLineLen {
			ask = append(ask, string(line))
		}
	}
	js, _ := json.Marshal(map[string]any{"ref": c.Ref, "lines": ask})
	type pageAnswer struct{ Status, Output string }
	got := eval[[]pageAnswer](p, fmt.Sprintf(`(() => { const x = %s; return Promise.all(x.lines.map((l) => window.dlroute.resolveJSON(x.ref, l))); })()`, js))
	if len(got) != len(ask) {
		t.Fatalf("the page answered %d lines; asked %d", len(got), len(ask))
	}
	var out bytes.Buffer
	status, next := 0, 0
	for n, l := range c.Lines {
		var reply []byte
		if line := bytes.TrimSuffix(l.Data, []byte("\r")); len(line) > contract.MaxLineLen {
			status = 1
			reply = contract.Line(n+1, nil, contract.TooLong())
		} else {
			a := got[next]
			next++
			if a.Status == "ok" {
				reply = contract.Line(n+1, []byte(a.Output), nil)
			} else {
				var e engine.Error
				if json.Unmarshal([]byte(a.Output), &e) != nil || e.Code == "" {
					t.Fatalf("%s %s: the page answered %s: %s", c.Ref, l.Origin, a.Status, a.Output)
				}
				status = 1
				reply = contract.Line(n+1, nil, &e)
			}
		}
		out.Write(reply)
		out.WriteByte('\n')
	}
	return corpus.SplitAnswers(out.Bytes(), status)
}
