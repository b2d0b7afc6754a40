package node_test

import (
	"io/fs"
	"path/filepath"
	"regexp"
	"slices"
	"testing"

	"github.com/dlroute/dlroute/wasm/node"
)

// importRE finds the specifier of every static import and re-export.
var importRE = regexp.MustCompile(`(?m)^\s*(?:import|export)\b[^;]*?\bfrom\s+"([^"]+)"|^\s*import\s+"([^"]+)"`)

// nodeOnlyRE finds what a browser does not have.
var nodeOnlyRE = regexp.MustCompile(`\b(?:require\s*\(|process\.|Buffer\.|import\.meta\.(?:dirname|filename|resolve))`)

// TestSharedModulesRunInTheBrowser checks what the page needs of the
// modules it shares with this package: that the directory's .js files are
// exactly node.Shared (a .js file here is a shared one), and that each
// imports only the others, by a relative name, and uses nothing of Node's.
// The browser test (e2e/playground) then runs them in Chromium.
func TestSharedModulesRunInTheBrowser(t *testing.T) {
	shared, err := fs.Glob(node.Shared, "*")
	if err != nil {
		t.Fatal(err)
	}
	here, _ := filepath.Glob("*.js")
	if !slices.Equal(shared, here) {
		t.Errorf("node.Shared holds %v, and the directory's .js files are %v: embed every .js file, and name Node-only ones .mjs", shared, here)
	}
	for _, name := range shared {
		src, err := fs.ReadFile(node.Shared, name)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range importRE.FindAllSubmatch(src, -1) {
			spec := string(m[1]) + string(m[2])
			if !slices.Contains(shared, spec[min(len(spec), 2):]) || spec[:min(len(spec), 2)] != "./" {
				t.Errorf("%s imports %q; a shared module imports only ./%v", name, spec, shared)
			}
		}
		if m := nodeOnlyRE.Find(src); m != nil {
			t.Errorf("%s uses %q, which a browser does not have", name, m)
		}
	}
}
