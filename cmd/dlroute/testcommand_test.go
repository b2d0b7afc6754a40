package main

import (
	"os"
	"strings"
	"testing"
)

// TestCIRunsTheREADMETestCommand: .ci/run runs the README's test command
// (the second line of "Two commands") as it is written, so CI tests what
// a person runs; the command runs both tiers, the core (go test ./... at
// the root, then -race on the packages whose goroutines share state,
// live among them) and the e2e tier (e2e/, a module of its own, which
// the root's ./... does not reach), each by gotestsum, so it shows each
// test as it ends.
func TestCIRunsTheREADMETestCommand(t *testing.T) {
	var command string
	for _, b := range readmeBlocks(t) {
		if strings.HasPrefix(b.At, "README.md:") && b.Mode == "first line" {
			_, command, _ = strings.Cut(strings.TrimSpace(b.Text), "\n")
			break
		}
	}
	parts := strings.Split(command, " && ")
	if len(parts) != 3 {
		t.Fatalf("the README's test command is %q; want three commands joined by &&: the core, its -race part, the e2e tier", command)
	}
	core, race, e2e := parts[0], parts[1], parts[2]
	if !strings.HasPrefix(core, "go run gotest.tools/gotestsum@") || strings.Contains(core, "-race") || !strings.HasSuffix(core, " ./...") {
		t.Fatalf("the README's test command is %q; want it to start with the core, go test ./... run by a pinned gotestsum", command)
	}
	if !strings.HasPrefix(race, "go run gotest.tools/gotestsum@") || !strings.Contains(race, " -- -race ") || !strings.Contains(race+" ", " ./live ") {
		t.Fatalf("the README's test command is %q; want the core && go test -race on the packages whose goroutines share state (./live among them), run by a pinned gotestsum", command)
	}
	if !strings.HasPrefix(e2e, "go -C e2e run gotest.tools/gotestsum@") || !strings.HasSuffix(e2e, " ./...") {
		t.Fatalf("the README's test command is %q; want the core && -race && the e2e tier, go test ./... in e2e/ run by a pinned gotestsum", command)
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
