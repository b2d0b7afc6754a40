package node

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/dlroute/dlroute/internal/build/wasmbuild"
	"github.com/dlroute/dlroute/internal/contract"
	"github.com/dlroute/dlroute/internal/testkit/testenv"
)

// repoRoot is the repository's root, from this package's directory.
const repoRoot = "../.."

// packageDir is the Node.js package's directory, where its tests run.
var packageDir = filepath.Join(repoRoot, "wasm", "node")

// nodeBinary finds node, or skips t (fails it under CI) where it is not
// installed: what runs without it is then not tested.
func nodeBinary(t testing.TB, what string) string {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		testenv.Missing(t, "node is not installed, so "+what+" (apt-get install -y nodejs; .ci/run installs it)")
	}
	return node
}

// TestNodePackage runs the Node.js package (wasm/node) against the module
// built from this checkout: `node --test` of each test/*.test.mjs in its
// directory, with $DLROUTE_WASM naming the module (internal/build/wasmbuild
// builds it) and $DLROUTE_TEST_ARCHIVE naming Go's archive (contract.PackFS) of
// the repository's rules directory, which the package's own packRules of
// it must equal. The package decides with the checked-in decision module
// (wasm/decision/decision.wasm), or the one $DLROUTE_DECISION_WASM names.
func TestNodePackage(t *testing.T) {
	testenv.Short(t, "the Node.js package through the module")
	node := nodeBinary(t, "the Node.js package's tests do not run")
	dir := t.TempDir()
	module, _, err := wasmbuild.Module(context.Background(), wasmbuild.Options{Progress: os.Stderr})
	if err != nil {
		t.Fatal(err)
	}
	// A file of the test's own, which no other build's cache pruning removes.
	modulePath := filepath.Join(dir, "dlroute.wasm")
	archive, err := contract.PackFS(os.DirFS(filepath.Join(repoRoot, "rules")))
	if err != nil {
		t.Fatal(err)
	}
	archivePath := filepath.Join(dir, "rules.archive")
	for path, data := range map[string][]byte{modulePath: module, archivePath: archive} {
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	files, _ := filepath.Glob(filepath.Join(packageDir, "test", "*.test.mjs"))
	if len(files) == 0 {
		t.Fatal("no wasm/node/test/*.test.mjs")
	}
	// A subtest and a `node --test` for each file, so the test command
	// shows each as it ends: node --test runs each file in a process of
	// its own anyway, and one at a time on two cores.
	for _, f := range files {
		f, _ = filepath.Rel(packageDir, f)
		t.Run(filepath.Base(f), func(t *testing.T) {
			cmd := exec.Command(node, "--test", "--test-reporter=spec", f)
			cmd.Dir = packageDir
			cmd.Env = append(os.Environ(), wasmbuild.EnvModule+"="+modulePath, "DLROUTE_TEST_ARCHIVE="+archivePath, "NO_COLOR=1")
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("node --test %s: %v\n%s", f, err, out)
			}
			if testing.Verbose() {
				t.Logf("node --test %s:\n%s", f, out)
			}
		})
	}
}
