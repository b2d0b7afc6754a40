package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/dlroute/dlroute/engine"
	"github.com/dlroute/dlroute/rules"
	"github.com/dlroute/dlroute/wasmhost"
)

// TestResolveEnginesAgree: `dlroute resolve --json` (and with --explain)
// writes the same bytes
// with --engine native and --engine wasm, for every case of every rule
// set and for lines that are not valid inputs.
func TestResolveEnginesAgree(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the WebAssembly module; skipped with -short")
	}
	cat, err := engine.Load(rules.FS, engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, rs := range cat.RuleSets() {
		t.Run(rs.Ref(), func(t *testing.T) { resolveEnginesAgree(t, rs) })
	}
}

// resolveEnginesAgree is TestResolveEnginesAgree for one version, a
// subtest of its own, so the test command shows each as it ends.
func resolveEnginesAgree(t *testing.T, rs *engine.RuleSet) {
	var lines []string
	for _, c := range rs.Cases() {
		b, err := json.Marshal(c.Input)
		if err != nil {
			t.Fatal(err)
		}
		lines = append(lines, string(b))
	}
	lines = append(lines, `{"platform":"gpu"`, ``, `{"platform":"gpu","platform_version":"cuda","local_hardware_id":"0"}`,
		`{"platform":"gpu","platform_version":"cuda","colour":"red"}`, "{\"platform\":\"gpu\",\"platform_version\":\"\xff\"}")
	stdin := strings.Join(lines, "\n") + "\n"
	for _, explain := range []bool{false, true} {
		args := []string{"resolve", "--json", "--ruleset", rs.Ref()}
		if explain {
			args = append(args, "--explain")
		}
		var outputs [2]string
		for i, kind := range []string{"native", "wasm"} {
			var out, errOut strings.Builder
			status := run(append(args, "--engine", kind), strings.NewReader(stdin), &out, &errOut)
			if status != 1 || strings.Count(out.String(), "\n") != len(lines) {
				t.Fatalf("%s --engine %s: status %d (want 1: the bad lines), %d lines for %d, stderr:\n%s", strings.Join(args, " "), kind, status, strings.Count(out.String(), "\n"), len(lines), errOut.String())
			}
			outputs[i] = out.String()
		}
		if outputs[0] != outputs[1] {
			t.Errorf("%s: the engines differ:\nnative:\n%s\nwasm:\n%s", strings.Join(args, " "), outputs[0], outputs[1])
		}
	}
}

// TestWasmEngineCompilesOncePerProcess: the --engine wasm commands of one
// process share one compiled module (the tests run hundreds, and each
// compile decodes and validates 24 MB again); a module that is not
// WebAssembly is refused and leaves the compiled one in place.
func TestWasmEngineCompilesOncePerProcess(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the WebAssembly module; skipped with -short")
	}
	var modules []*wasmhost.Module
	for range 2 {
		stdout, stderr, status := runDlroute(t, "resolve", "--engine", "wasm", "--platform", "gpu", "--platform-version", "cuda 12030", "--local-hardware-id", "0")
		if status != 0 || !strings.Contains(stdout, `"kDLCUDA"`) {
			t.Fatalf("resolve --engine wasm: status %d, stdout %q, stderr %q", status, stdout, stderr)
		}
		compiled.Lock()
		modules = append(modules, compiled.module)
		compiled.Unlock()
	}
	if modules[0] == nil || modules[1] != modules[0] {
		t.Fatalf("two resolve --engine wasm compiled the module as %p and %p; want one compiled module, shared", modules[0], modules[1])
	}
	if _, err := compiledModule(context.Background(), []byte("not wasm")); err == nil {
		t.Fatal("compiledModule(not wasm): no error")
	}
	compiled.Lock()
	defer compiled.Unlock()
	if compiled.module != modules[0] {
		t.Fatal("a module that does not compile replaced the compiled one")
	}
}
