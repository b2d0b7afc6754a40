package dlroute

import (
	"os/exec"
	"strings"
	"testing"
)

// coreParts are the programs the core's `go test ./...` needs besides
// Go, with the Debian package that installs each: the e2e tier's are in
// e2e/hostparts_test.go.
var coreParts = []struct{ pkg, why, program string }{
	{"gcc", "the C library's tests", "gcc"},
	{"git", "the README's ignore rules", "git"},
	{"clang lld wasi-libc libclang-rt-14-dev-wasm32", "rebuilding the decision module to check it is fresh", "clang"},
	{"binaryen", "the wasm-opt pass clang runs over the decision module", "wasm-opt"},
}

// TestHostPartsInstalled names, in one line at the start of the run (this
// package's tests run and print first), every program the core needs
// that Go does not bring, with the command that installs them. The core
// needs no Chromium, Node.js or Python: those are the e2e tier's (e2e/,
// whose own TestHostPartsInstalled names them). The quick loop (-short)
// runs no host and needs none.
func TestHostPartsInstalled(t *testing.T) {
	if testing.Short() {
		t.Skip("-short runs no host")
	}
	var missing, whys []string
	for _, p := range coreParts {
		if _, err := exec.LookPath(p.program); err != nil {
			missing = append(missing, p.pkg)
			whys = append(whys, p.why)
		}
	}
	if len(missing) > 0 {
		t.Errorf("not installed: %s (for %s), so those tests skip: apt-get install -y %s; or run the quick loop, go test -short ./...",
			strings.Join(missing, ", "), strings.Join(whys, "; "), strings.Join(missing, " "))
	}
}
