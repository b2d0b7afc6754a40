package playground

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/dlroute/dlroute/internal/testkit/testenv"
)

// pageDir is the page's directory, where its modules' tests run.
var pageDir = filepath.Join(repoRoot, "playground")

// TestPageModules runs the unit tests of the page's modules that need no
// browser (the state, the input, one decision on a fake engine, the form's
// fields, the share link and the download, the views' marks, what changed,
// the examples against the shipped rules): `node --test test/*.test.mjs`
// in playground/. The modules are the files the page serves, imported as
// they are (package.json there says they are ES modules). The browser
// test (TestPlaygroundInBrowser) covers the rest. It skips only where
// node is not installed; .ci/run installs it.
func TestPageModules(t *testing.T) {
	testenv.Short(t, "the page's modules under node")
	node, err := exec.LookPath("node")
	if err != nil {
		testenv.Missing(t, "node is not installed, so the page's module tests do not run (apt-get install -y nodejs; .ci/run installs it)")
	}
	files, _ := filepath.Glob(filepath.Join(pageDir, "test", "*.test.mjs"))
	if len(files) == 0 {
		t.Fatal("no playground/test/*.test.mjs")
	}
	for i, f := range files {
		files[i], _ = filepath.Rel(pageDir, f)
	}
	cmd := exec.Command(node, append([]string{"--test", "--test-reporter=spec"}, files...)...)
	cmd.Dir = pageDir
	cmd.Env = append(os.Environ(), "NO_COLOR=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("node --test: %v\n%s", err, out)
	}
	if testing.Verbose() {
		t.Logf("node --test:\n%s", out)
	}
}
