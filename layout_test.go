package dlroute

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// layers are the module's homes from the top down, as README.md's Layout
// draws them: a package imports only homes of a lower layer, and packages
// of its own home (a host's internal/, serve's engine). A home is a
// package and every package under it that no other home claims. A host
// is at the top with its logic in its own internal/ (issue 40: "Each host
// in one home"); every host is written against internal/contract.
var layers = [][]string{
	{"cmd/dlroute", "libdlroute", "wasm"},
	{"playground", "internal/testkit/ctest"},
	{"live", "wasmhost", "internal/rulesource", "internal/testkit/ruletest", "internal/build/wasmbuild"},
	{"bundle", "internal/build/codegen", "internal/testkit/corpus"},
	{"internal/contract", "internal/interop", "machine", "internal/fsutil/rootfs", "internal/build/parsedgen"},
	{"engine"},
	{"plan", "internal/memo", "internal/number"},
	{"", "rules", "wasm/node", "internal/fsutil/atomicfile", "internal/testkit/testenv", "internal/testkit/fuzzbound", "internal/testkit/readme", "internal/build/decisiongen", "wasm/decision"},
}

// home returns the home of pkg (a path in the module, "" for the root
// package) and its layer, 0 at the top; ok is false for a package in no
// home.
func home(pkg string) (h string, layer int, ok bool) {
	for i, homes := range layers {
		for _, c := range homes {
			if (c == pkg || c != "" && strings.HasPrefix(pkg, c+"/")) && (!ok || len(c) > len(h)) {
				h, layer, ok = c, i, true
			}
		}
	}
	return h, layer, ok
}

// TestImportsRunDown: go list's imports, for this machine and for the
// WebAssembly module's wasip1, run from a higher layer to a lower one, or
// within one home.
func TestImportsRunDown(t *testing.T) {
	const module = "github.com/dlroute/dlroute"
	imports := map[string][]string{}
	for _, env := range [][]string{nil, {"GOOS=wasip1", "GOARCH=wasm"}} {
		pattern := "./..."
		if env != nil {
			pattern = "./wasm/..." // the modules, which build for wasip1 only
		}
		cmd := exec.Command("go", "list", "-f", `{{.ImportPath}} {{join .Imports " "}}`, pattern)
		cmd.Env = append(os.Environ(), env...)
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("go list %s %v: %v", pattern, env, err)
		}
		for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
			fields := strings.Fields(line)
			imports[fields[0]] = append(imports[fields[0]], fields[1:]...)
		}
	}
	rel := func(p string) (string, bool) {
		if p == module {
			return "", true
		}
		r, ok := strings.CutPrefix(p, module+"/")
		return r, ok
	}
	hosts := map[string]bool{}
	for pkg, deps := range imports {
		p, _ := rel(pkg)
		h, layer, ok := home(p)
		if !ok {
			t.Errorf("%s is in no home: add it to a layer of layers (layout_test.go) and to README.md's Layout", pkg)
			continue
		}
		for _, dep := range deps {
			d, ours := rel(dep)
			if !ours {
				continue
			}
			if d == "internal/contract" && layer == 0 {
				hosts[h] = true
			}
			dh, dlayer, ok := home(d)
			if ok && dh != h && dlayer <= layer {
				t.Errorf("%s imports %s, of the same layer or a higher one (layout_test.go's layers)", pkg, dep)
			}
		}
	}
	for _, h := range []string{"cmd/dlroute", "libdlroute", "wasm"} {
		if !hosts[h] {
			t.Errorf("host %s does not import internal/contract", h)
		}
	}
}
