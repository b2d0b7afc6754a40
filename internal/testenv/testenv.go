// Package testenv says what a test does when a real part it needs (node,
// chromium, a C compiler, Python with torch) is not installed: it skips
// on a developer's machine, saying what to install, and fails under CI
// (CI=true), where .ci/run installs every part, so that a green run never
// hides a host that was not tested.
package testenv

import (
	"os"
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
