package main

// The hosts the corpus (corpus_test.go) runs through besides the native
// engine: the module through wazero (`dlroute resolve --json --engine
// wasm`) and the C library's example. (Node.js and the Python package
// are the e2e tier's, e2e/corpus's TestCorpus, and so is the browser, the
// playground's window.dlroute.resolveJSON in headless Chromium:
// e2e/playground's TestCorpusInBrowser.)

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"testing"

	"github.com/dlroute/dlroute/engine"
	"github.com/dlroute/dlroute/internal/testkit/corpus"
	"github.com/dlroute/dlroute/internal/testkit/ctest"
)

// corpusHost answers a rule set's corpus as `dlroute resolve --json`
// would. start prepares it for the whole corpus, or skips the test where
// it cannot run here (or under -short: the hosts are the long part of the
// run), and returns its answering function.
type corpusHost struct {
	name  string
	start func(t *testing.T, lines []corpus.RuleSet) func(t *testing.T, c corpus.RuleSet) corpus.Answers
}

var corpusHosts = []corpusHost{
	{"wazero", startWazero},
	{"c", startC},
}

func startWazero(t *testing.T, _ []corpus.RuleSet) func(*testing.T, corpus.RuleSet) corpus.Answers {
	return func(t *testing.T, c corpus.RuleSet) corpus.Answers {
		var stdout, stderr bytes.Buffer
		status := run([]string{"resolve", "--json", "--engine", "wasm", "--ruleset", c.Ref}, bytes.NewReader(c.Stdin()), &stdout, &stderr)
		return corpus.SplitAnswers(stdout.Bytes(), status)
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

// startC runs the C example over libdlroute (libdlroute/example/route.c):
// it answers every line as dlroute_resolve_json does, as `dlroute
// resolve --json` answers that line alone. The
// command's own answerLines writes the answers, so an error's line number
// is the corpus's; what is compared is each host's decisions and error
// objects.
func startC(t *testing.T, _ []corpus.RuleSet) func(*testing.T, corpus.RuleSet) corpus.Answers {
	prog := ctest.Program(t, "../../libdlroute", "../../libdlroute/example/route.c")
	return libraryHost(func(ref string) *exec.Cmd { return exec.Command(prog, ref) })
}

// libraryHost answers a corpus with the process command(ref) starts: one
// output line for each line it is given.
func libraryHost(command func(ref string) *exec.Cmd) func(*testing.T, corpus.RuleSet) corpus.Answers {
	return func(t *testing.T, c corpus.RuleSet) corpus.Answers {
		lines := readLines(c.Stdin())
		cmd := command(c.Ref)
		var stdin bytes.Buffer
		for _, l := range lines {
			stdin.WriteString(l)
			stdin.WriteByte('\n')
		}
		cmd.Stdin = &stdin
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		var exit *exec.ExitError
		if err != nil && !errors.As(err, &exit) {
			t.Fatalf("%s: %v", cmd, err)
		}
		if stderr.Len() > 0 {
			t.Errorf("%s wrote to stderr:\n%s", cmd, stderr.String())
		}
		got := corpus.SplitAnswers(stdout.Bytes(), 0).Lines
		next := 0
		decide := func(_ context.Context, line []byte) ([]byte, error) {
			if next >= len(got) {
				return nil, fmt.Errorf("%s answered %d lines; asked for more", cmd, len(got))
			}
			a := got[next]
			next++
			return answerOfLine(a)
		}
		var out bytes.Buffer
		status := answerLines(context.Background(), decide, bytes.NewReader(c.Stdin()), &out)
		return corpus.SplitAnswers(out.Bytes(), status)
	}
}

// answerOfLine reads a line as dlroute_resolve_json writes it back into
// what ResolveJSON returns: a decision, or the error of an error line.
func answerOfLine(line []byte) ([]byte, error) {
	var wrapped map[string]json.RawMessage
	if !bytes.HasPrefix(line, []byte(`{"input_error":`)) && !bytes.HasPrefix(line, []byte(`{"eval_error":`)) {
		return line, nil
	}
	if err := json.Unmarshal(line, &wrapped); err != nil || len(wrapped) != 1 {
		return nil, fmt.Errorf("not an error line: %s", line)
	}
	for _, raw := range wrapped {
		var l struct {
			Code     engine.Code      `json:"code"`
			Message  string           `json:"message"`
			Position *engine.Position `json:"position"`
			Hint     string           `json:"hint"`
		}
		if err := json.Unmarshal(raw, &l); err != nil {
			return nil, fmt.Errorf("not an error line: %s", line)
		}
		return nil, &engine.Error{Code: l.Code, Message: l.Message, Pos: l.Position, Hint: l.Hint}
	}
	panic("unreachable")
}
