package plan

import (
	"os/exec"
	"strings"
	"testing"
)

// TestImportsNoCompiler: a host that only decides embeds this package,
// so it links no CEL compiler, protobuf or YAML, nor the parts of the
// standard library that made a decision module large (encoding/json,
// fmt, reflect, and strings and encoding/binary, which bring the unicode
// tables and reflect), and builds for wasip1.
func TestImportsNoCompiler(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	for _, p := range strings.Fields(string(out)) {
		for _, banned := range []string{"cel.dev/", "google.golang.org/protobuf", "go.yaml.in/", "gopkg.in/yaml", "github.com/dlroute/dlroute/engine"} {
			if strings.HasPrefix(p, banned) {
				t.Errorf("package plan imports %s", p)
			}
		}
		switch p {
		case "encoding/json", "fmt", "reflect", "strings", "encoding/binary", "unicode":
			t.Errorf("package plan imports %s (see plan/RATIONALE.md, \"Why a hand-written JSON reader?\")", p)
		}
	}
	cmd := exec.Command("go", "build", "-o", "/dev/null", ".")
	cmd.Env = append(cmd.Environ(), "GOOS=wasip1", "GOARCH=wasm")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("GOOS=wasip1 GOARCH=wasm go build ./plan: %v\n%s", err, out)
	}
}
