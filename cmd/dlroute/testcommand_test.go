package main

import (
	"os"
	"strings"
	"testing"
)

// TestCIRunsTheREADMETestCommand: .ci/run runs the README's test command
// (the second line of "Two commands") as it is written, so CI tests what
// a person runs, and the command is run by gotestsum, so it shows each
// test as it ends.
func TestCIRunsTheREADMETestCommand(t *testing.T) {
	var command string
	for _, b := range readmeBlocks(t) {
		if strings.HasPrefix(b.at, "README.md:") && b.mode == "first line" {
			_, command, _ = strings.Cut(strings.TrimSpace(b.text), "\n")
			break
		}
	}
	if !strings.Contains(command, "gotestsum@") || !strings.Contains(command, " -- -race ") {
		t.Fatalf("the README's test command is %q; want go test -race run by a pinned gotestsum", command)
	}
	ci, err := os.ReadFile("../../.ci/run")
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.Lines(string(ci)) {
		if strings.HasSuffix(strings.TrimSpace(line), " "+command) || strings.TrimSpace(line) == command {
			return
		}
	}
	t.Errorf(".ci/run does not run the README's test command:\n%s", command)
}
