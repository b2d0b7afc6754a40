//go:build unix

package main

import (
	"io"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"

	"github.com/dlroute/dlroute/internal/testkit/ruletest"
)

// TestPlanUnsupportedRefusedAlike is issue 35's "lint, native serve and
// serve --engine wasm accept exactly the same rule sets" for an
// expression cel-go compiles and no plan holds: lint, serve and serve
// --engine wasm each refuse the folder at the same position, and serve,
// with no good rules at start, exits saying so.
func TestPlanUnsupportedRefusedAlike(t *testing.T) {
	if testing.Short() {
		t.Skip("serve --engine wasm builds the decision module; skipped with -short")
	}
	dir := filepath.Join(t.TempDir(), "rules")
	if err := ruletest.WriteDir(dir, planUnsupported(t)); err != nil {
		t.Fatal(err)
	}
	const at = "/jax/v3/rules.yaml:52:42: rule "
	stdout, stderr, status := runCommand("lint", "--rules", dir)
	if status != 1 || !strings.Contains(stdout, at) || !strings.Contains(stdout, "function matches") || !strings.Contains(stdout, "hint: a plan covers") {
		t.Errorf("lint: status %d\n%s%s\nwant 1, the expression at %s, with the hint", status, stdout, stderr, at)
	}
	for _, engine := range []string{"native", "wasm"} {
		stdout, stderr, status := runCommand("serve", "--engine", engine, "--addr", "127.0.0.1:0", "--rules", dir, "--keep", "off")
		if status != 1 || !strings.Contains(stderr, at) || !strings.Contains(stderr, "function matches") {
			t.Errorf("serve --engine %s: status %d\n%s%s\nwant 1, the expression at %s", engine, status, stdout, stderr, at)
		}
	}
}

// TestServeWasmRefusesBadRulesAtStart: serve --engine wasm started with
// no good rules exits with the rules' own error, at its position, as
// native serve does: no module error, no guest's stack. With good
// rules it starts and decides.
func TestServeWasmRefusesBadRulesAtStart(t *testing.T) {
	if testing.Short() {
		t.Skip("serve --engine wasm builds the decision module; skipped with -short")
	}
	dir := filepath.Join(t.TempDir(), "rules")
	fsys := ruletest.Rules()
	fsys["jax/v3/rules.yaml"].Data = []byte(strings.Replace(string(fsys["jax/v3/rules.yaml"].Data), "when: shards != 1", "when: shards != ", 1))
	if err := ruletest.WriteDir(dir, fsys); err != nil {
		t.Fatal(err)
	}
	var native string
	for _, engine := range []string{"native", "wasm"} {
		_, stderr, status := runCommand("serve", "--engine", engine, "--addr", "127.0.0.1:0", "--rules", dir, "--keep", "off")
		stderr = logTime.ReplaceAllString(buildLine.ReplaceAllString(stderr, ""), "time=T")
		if status != 1 || !strings.Contains(stderr, "/jax/v3/rules.yaml:52:") || strings.Contains(stderr, "module_error") || strings.Contains(stderr, "goroutine") {
			t.Errorf("serve --engine %s of rules that do not compile: status %d\n%s\nwant 1, the rules' error at jax/v3/rules.yaml:52", engine, status, stderr)
		}
		if engine == "native" {
			native = stderr
		} else if stderr != native {
			t.Errorf("serve --engine wasm said\n%s\nnative serve\n%s\nwant the same, the log's times aside", stderr, native)
		}
	}

	if err := ruletest.WriteDir(dir, ruletest.Rules()); err != nil {
		t.Fatal(err)
	}
	log := &listenLog{listening: make(chan string, 1)}
	exited := make(chan int, 1)
	go func() {
		exited <- run([]string{"serve", "--engine", "wasm", "--addr", "127.0.0.1:0", "--rules", dir, "--keep", "off"}, nil, io.Discard, log)
	}()
	var url string
	select {
	case url = <-log.listening:
	case status := <-exited:
		t.Fatalf("serve --engine wasm of good rules exited with %d:\n%s", status, log)
	}
	if got := post(t, url, `{"platform":"gpu","platform_version":"rocm 60200","local_hardware_id":1}`); !strings.Contains(got, `"device_type":"kDLROCM"`) {
		t.Errorf("serve --engine wasm answered %s; want kDLROCM", got)
	}
	syscall.Kill(syscall.Getpid(), syscall.SIGTERM)
	if status := <-exited; status != 0 {
		t.Errorf("after SIGTERM, serve --engine wasm exited with %d:\n%s", status, log)
	}
}

// logTime is the time of a line of serve's log.
var logTime = regexp.MustCompile(`time=\S+`)

// buildLine is the line wasmbuild prints before it builds a module, which
// depends on the cache, not on the command.
var buildLine = regexp.MustCompile(`(?m)^building the .* from .*\n`)
