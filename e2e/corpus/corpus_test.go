package corpus_test

// One corpus, every host (internal/testkit/corpus): each rule set's inputs go
// through `dlroute resolve --json`, the binary of this checkout (the
// reference), and through the hosts here (hosts_test.go: Node.js and the
// Python package); each host's output must be the native output byte for
// byte, line by line, but for the known differences of
// testdata/corpus/exceptions.txt.

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

	"github.com/dlroute/dlroute/internal/testkit/corpus"
	"github.com/dlroute/dlroute/internal/testkit/testenv"
)

// repoRoot is the repository's root, from this package's directory.
const repoRoot = "../.."

// binDir holds the dlroute binary these tests build, removed when they end.
var binDir string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "dlroute-e2e-corpus-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binDir = dir
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// dlroute is the dlroute binary of this checkout, built once per test
// binary, the first time a host asks for the native answers (under
// -short none does), in the root module, as a person's `go build
// ./cmd/dlroute`.
var dlroute = sync.OnceValues(func() (string, error) {
	bin := filepath.Join(binDir, "dlroute")
	cmd := exec.Command("go", "build", "-o", bin, "github.com/dlroute/dlroute/cmd/dlroute")
	cmd.Dir = repoRoot
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build ./cmd/dlroute: %v\n%s", err, out)
	}
	return bin, nil
})

func TestCorpus(t *testing.T) {
	lines := corpus.Load(t, repoRoot)
	exceptions := corpus.ReadExceptions(t, repoRoot)
	// The native answers, made once a host runs (under -short none does).
	native := sync.OnceValues(func() ([]corpus.Answers, error) {
		bin, err := dlroute()
		if err != nil {
			return nil, err
		}
		native := make([]corpus.Answers, len(lines))
		for i, c := range lines {
			cmd := exec.Command(bin, "resolve", "--json", "--ruleset", c.Ref)
			cmd.Stdin = bytes.NewReader(c.Stdin())
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			var exit *exec.ExitError
			if err := cmd.Run(); err != nil && !errors.As(err, &exit) {
				return nil, fmt.Errorf("dlroute resolve --json --ruleset %s: %v", c.Ref, err)
			}
			native[i] = corpus.SplitAnswers(stdout.Bytes(), cmd.ProcessState.ExitCode())
			if len(native[i].Lines) != len(c.Lines) {
				return nil, fmt.Errorf("native %s: %d output lines for %d inputs; stderr: %s", c.Ref, len(native[i].Lines), len(c.Lines), stderr.String())
			}
		}
		return native, nil
	})
	for _, h := range corpusHosts {
		t.Run(h.name, func(t *testing.T) {
			testenv.Short(t, "the corpus on the "+h.name+" host")
			answer := h.start(t, lines) // skips where the host cannot run here
			// The native answers, made once for every host, in two steps
			// of their own, so the test command shows each end: the
			// build of dlroute, then its answers.
			if !t.Run("build", func(t *testing.T) {
				if _, err := dlroute(); err != nil {
					t.Fatal(err)
				}
			}) {
				return
			}
			var want []corpus.Answers
			if !t.Run("native", func(t *testing.T) {
				var err error
				if want, err = native(); err != nil {
					t.Fatal(err)
				}
			}) {
				return
			}
			used := corpus.Used{}
			for i, c := range lines {
				// A subtest each, so the test command shows each version
				// as it ends.
				t.Run(c.Ref, func(t *testing.T) { corpus.Compare(t, h.name, c, want[i], answer(t, c), used, exceptions) })
			}
			corpus.CheckUsed(t, h.name, lines, used, exceptions)
		})
	}
}
