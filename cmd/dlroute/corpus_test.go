package main

// One corpus, every host (internal/testkit/corpus): each rule set's inputs go
// through `dlroute resolve --json` natively (the reference), and through
// the hosts here (hosts_test.go: wazero and the C library's example);
// each host's output must be the native output byte for byte, line by
// line, but for the known differences of testdata/corpus/exceptions.txt.
// The hosts that need more than Go and a C compiler are the e2e tier's:
// Node.js and the Python package (e2e/corpus, TestCorpus) and the
// playground's page in headless Chromium (e2e/playground,
// TestCorpusInBrowser).

import (
	"bytes"
	"fmt"
	"sync"
	"testing"

	"github.com/dlroute/dlroute/internal/testkit/corpus"
	"github.com/dlroute/dlroute/internal/testkit/testenv"
)

// repoRoot is the repository's root, from this package's directory.
const repoRoot = "../.."

func TestCorpus(t *testing.T) {
	lines := corpus.Load(t, repoRoot)
	exceptions := corpus.ReadExceptions(t, repoRoot)
	// The native answers, made once a host runs (under -short none does).
	native := sync.OnceValues(func() ([]corpus.Answers, error) {
		native := make([]corpus.Answers, len(lines))
		for i, c := range lines {
			var stdout, stderr bytes.Buffer
			status := run([]string{"resolve", "--json", "--ruleset", c.Ref}, bytes.NewReader(c.Stdin()), &stdout, &stderr)
			native[i] = corpus.SplitAnswers(stdout.Bytes(), status)
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
			want, err := native()
			if err != nil {
				t.Fatal(err)
			}
			used := corpus.Used{}
			for i, c := range lines {
				// A subtest each, so the test command shows each version
				// as it ends (the wazero host takes minutes in all).
				t.Run(c.Ref, func(t *testing.T) { corpus.Compare(t, h.name, c, want[i], answer(t, c), used, exceptions) })
			}
			corpus.CheckUsed(t, h.name, lines, used, exceptions)
		})
	}
}
