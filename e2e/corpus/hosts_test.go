package corpus_test

// The hosts the corpus (corpus_test.go) runs through here: the Python
// package over the C library. (wazero and the C library's example are the
// core's: cmd/dlroute's TestCorpus; the browser is e2e/playground's
// TestCorpusInBrowser; the Node.js package is e2e/node's
// TestPackageDecidesTheCorpus, which also checks that no answer needs
// the compiler module.)

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/dlroute/dlroute/engine"
	"github.com/dlroute/dlroute/internal/build/wasmbuild"
	"github.com/dlroute/dlroute/internal/contract"
	"github.com/dlroute/dlroute/internal/testkit/corpus"
	"github.com/dlroute/dlroute/internal/testkit/ctest"
	"github.com/dlroute/dlroute/internal/testkit/testenv"
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
	{"python", startPython},
}

// startPython runs the Python package's `python -m dlroute resolve` over
// libdlroute built from this checkout: it answers every line as
// dlroute_resolve_json does, as `dlroute resolve --json` answers that line
// alone. libraryAnswers writes the answers as the command does, so an
// error's line number is the corpus's; what is compared is the host's
// decisions and error objects.
func startPython(t *testing.T, _ []corpus.RuleSet) func(*testing.T, corpus.RuleSet) corpus.Answers {
	python, err := exec.LookPath("python3")
	if err != nil {
		testenv.Missing(t, "python3 is not installed, so the Python host does not run")
	}
	lib := filepath.Join(ctest.Library(t), "libdlroute.so")
	return func(t *testing.T, c corpus.RuleSet) corpus.Answers {
		cmd := exec.Command(python, "-m", "dlroute", "resolve", "--ruleset", c.Ref)
		cmd.Env = append(os.Environ(), "PYTHONPATH="+filepath.Join(repoRoot, "python"), wasmbuild.EnvLibrary+"="+lib)
		return libraryAnswers(t, cmd, c)
	}
}

// libraryAnswers answers c with the process cmd starts, which writes one
// output line for each line it is given: it is given each line `dlroute
// resolve --json` would decide (a line over contract.MaxLineLen the command
// refuses unread), and its answers are written as the command writes each
// line's.
func libraryAnswers(t *testing.T, cmd *exec.Cmd, c corpus.RuleSet) corpus.Answers {
	t.Helper()
	var stdin bytes.Buffer
	for _, l := range c.Lines {
		if line := bytes.TrimSuffix(l.Data, []byte("\r")); len(line) <= contract.MaxLineLen {
			stdin.Write(line)
			stdin.WriteByte('\n')
		}
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
	var out bytes.Buffer
	status, next := 0, 0
	for n, l := range c.Lines {
		var reply []byte
		if line := bytes.TrimSuffix(l.Data, []byte("\r")); len(line) > contract.MaxLineLen {
			status = 1
			reply = contract.Line(n+1, nil, contract.TooLong())
		} else {
			var decided []byte
			err := fmt.Errorf("%s answered %d lines; asked for more", cmd, len(got))
			if next < len(got) {
				decided, err = answerOfLine(got[next])
				next++
			}
			if err != nil {
				status = 1
			}
			reply = contract.Line(n+1, decided, err)
		}
		out.Write(reply)
		out.WriteByte('\n')
	}
	return corpus.SplitAnswers(out.Bytes(), status)
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
