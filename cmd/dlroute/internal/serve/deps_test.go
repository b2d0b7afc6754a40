package serve

import (
	"os/exec"
	"strings"
	"testing"
)

// TestImportsNoWebAssemblyEngine: serve takes its engine from the command
// (cmd/dlroute/internal/serve/wasmserve for --engine wasm) and links neither the wazero host
// nor wazero itself.
func TestImportsNoWebAssemblyEngine(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	for _, p := range strings.Fields(string(out)) {
		if strings.HasSuffix(p, "/wasmhost") || strings.HasSuffix(p, "/wasmserve") || strings.HasPrefix(p, "github.com/tetratelabs/wazero") {
			t.Errorf("cmd/dlroute/internal/serve imports %s: give the engine from cmd/dlroute instead", p)
		}
	}
}
