// Package testenv says what a test does when a real part it needs (node,
// chromium, a C compiler, Python with torch) is not installed: it skips
// on a developer's machine, saying what to install, and fails under CI
// (CI=true), where .ci/run installs every part, so that a green run never
// hides a host that was not tested.
package testenv

import (
	"os"
	"runtime/debug"
	"testing"
)

// Missing skips t, or fails it under CI, because of why: what is missing
// and how to install it.
func Missing(t testing.TB, why string) {
	t.Helper()
	if os.Getenv("CI") == "true" {
		t.Fatal(why + "; under CI (CI=true) every host must run")
	}
	t.Skip(why)
}

// Short skips t under -short, the quick loop: what (a host through the
// WebAssembly module, a browser, another language) runs in the full
// `go test ./...`, which CI runs.
func Short(t testing.TB, what string) {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: " + what + " runs in the full go test ./...")
	}
}

// Main runs a package's tests, as a TestMain does, with the collector
// running at a quarter of its default pace (GOGC=400) unless GOGC is set:
// the tests load the rule sets dozens of times, and each load allocates
// much that is garbage at once, so at the default the collector is a
// large share of the quick loop's CPU (internal/testkit/testenv/RATIONALE.md, "Why does `-short`
// skip every host?"; BENCHMARKS.md, "The test command"). It changes no
// result: what a test measures of memory is what was allocated, not what
// is kept.
func Main(m *testing.M) {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(400)
	}
	os.Exit(m.Run())
}
