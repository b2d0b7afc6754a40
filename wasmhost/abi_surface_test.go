package wasmhost

import (
	"context"
	"flag"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"

	"github.com/dlroute/dlroute/internal/contract"
)

// abiGolden is what a host sees of the module: its ABI version and every
// export and import with its signature. The Node package's tests read the
// same file.
const abiGolden = "../wasm/testdata/abi-v1.golden"

var updateABI = flag.Bool("update-abi", false, "rewrite "+abiGolden+" from the module built from this checkout")

// TestABISurface keeps the module's exports and imports, which every host
// (wazero here, Node.js, the browser) is written against, equal to the
// golden file. Adding an export is a new line there; changing or removing
// one breaks hosts, and is a new ABI version (wasm/ABI.md, Versioning).
func TestABISurface(t *testing.T) {
	needModule(t)
	got := abiSurface(t, module)
	if *updateABI {
		if err := os.WriteFile(abiGolden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(abiGolden)
	if err != nil {
		t.Fatal(err)
	}
	if got != string(want) {
		t.Errorf("the module's ABI surface differs from %s:\n%s\nhint: a change a host can see; if it is meant, say so in wasm/ABI.md (a new ABI version unless it only adds) and run go test ./wasmhost -run ABISurface -update-abi", abiGolden, lineDiff(string(want), got))
	}
}

// abiSurface describes the module as the golden file does, sorted so that
// the order of the module's sections does not matter.
func abiSurface(t *testing.T, module []byte) string {
	t.Helper()
	ctx := context.Background()
	rc := wazero.NewRuntimeConfig()
	if dir, err := cacheDir(""); err == nil { // the runner's cache: a warm compile
		if cache, err := wazero.NewCompilationCacheWithDir(dir); err == nil {
			rc = rc.WithCompilationCache(cache)
		}
	}
	rt := wazero.NewRuntimeWithConfig(ctx, rc)
	defer rt.Close(ctx)
	compiled, err := rt.CompileModule(ctx, module)
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for name, f := range compiled.ExportedFunctions() {
		lines = append(lines, "export "+name+" "+signature(f))
	}
	for name := range compiled.ExportedMemories() {
		lines = append(lines, "export "+name+" memory")
	}
	for _, f := range compiled.ImportedFunctions() {
		mod, name, _ := f.Import()
		lines = append(lines, "import "+mod+" "+name+" "+signature(f))
	}
	slices.Sort(lines)
	lines = slices.Compact(lines) // the Go runtime imports some WASI functions twice
	header := fmt.Sprintf(`# The dlroute module's ABI as a host sees it: the version dlroute_abi_version
# returns, and every export and import with its signature (wasm/ABI.md).
# wasmhost's TestABISurface and the Node package's tests check the module
# built from the checkout against this file; rewrite it with
#   go test ./wasmhost -run ABISurface -update-abi
abi_version %d
`, contract.Version)
	return header + strings.Join(lines, "\n") + "\n"
}

func signature(f api.FunctionDefinition) string {
	names := func(types []api.ValueType) string {
		var s []string
		for _, t := range types {
			s = append(s, api.ValueTypeName(t))
		}
		return strings.Join(s, " ")
	}
	return fmt.Sprintf("func(%s) -> (%s)", names(f.ParamTypes()), names(f.ResultTypes()))
}

// lineDiff lists the lines only one side has.
func lineDiff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	var b strings.Builder
	for _, l := range w {
		if !slices.Contains(g, l) {
			fmt.Fprintf(&b, "- %s\n", l)
		}
	}
	for _, l := range g {
		if !slices.Contains(w, l) {
			fmt.Fprintf(&b, "+ %s\n", l)
		}
	}
	return b.String()
}
