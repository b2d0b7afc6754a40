package jstools

import (
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/dlroute/dlroute/internal/testkit/testenv"
)

// TestLint runs ESLint (_npm/eslint.config.mjs: the
// recommended rules, each file with the globals of where it runs) over
// every JavaScript file of the repository: the page's modules and their
// tests, and the Node package with its tests.
func TestLint(t *testing.T) {
	testenv.Short(t, "ESLint")
	eslint := Path(t, ".bin/eslint")
	if _, err := exec.LookPath("node"); err != nil {
		testenv.Missing(t, "node is not installed, so ESLint does not run (apt-get install -y nodejs)")
	}
	root := filepath.Join(Dir(), "..", "..", "..")
	cmd := exec.Command(eslint, "--max-warnings", "0", "--config", filepath.Join(Dir(), "eslint.config.mjs"),
		"playground", "wasm/node")
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("eslint: %v\n%s", err, out)
	}
}
