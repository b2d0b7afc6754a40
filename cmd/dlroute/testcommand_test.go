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
// live among them, each after a go build -v that names each package as
// it compiles) and the e2e tier (e2e/, a module of its own, which
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
	if len(parts) != 5 {
		t.Fatalf("the README's test command is %q; want five commands joined by &&: go build -v, the core, go build -race -v, its -race part, the e2e tier", command)
	}
	// go test prints nothing while it compiles: go build -v names each
	// package as it compiles first.
	if parts[0] != "go build -v ./..." || parts[2] != "go build -race -v ./..." {
		t.Fatalf("the README's test command is %q; want each tier of the core preceded by its go build -v", command)
	}
	core, race, e2e := parts[1], parts[3], parts[4]
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
