package main

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/dlroute/dlroute/engine"
	"github.com/dlroute/dlroute/internal/testkit/ruletest"
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
	// Lines that are not valid inputs, and one that leaves
	// platform_version out: no engine reads the device under resolve.
	lines = append(lines, `{"platform":"gpu"`, ``, `{"platform":"gpu","platform_version":"cuda","local_hardware_id":"0"}`, `{"platform":"gpu","local_hardware_id":0}`,
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
// process share one compiled decision module (the tests run hundreds); a
// module that is not WebAssembly is refused and leaves the compiled one
// in place.
func TestWasmEngineCompilesOncePerProcess(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the WebAssembly module; skipped with -short")
	}
	var modules []*wasmhost.DecisionModule
	for range 2 {
		stdout, stderr, status := runCommand("resolve", "--engine", "wasm", "--platform", "gpu", "--platform-version", "cuda 12030", "--local-hardware-id", "0")
		if status != 0 || !strings.Contains(stdout, `"kDLCUDA"`) {
			t.Fatalf("resolve --engine wasm: status %d, stdout %q, stderr %q", status, stdout, stderr)
		}
		decisions.Lock()
		modules = append(modules, decisions.module)
		decisions.Unlock()
	}
	if modules[0] == nil || modules[1] != modules[0] {
		t.Fatalf("two resolve --engine wasm compiled the decision module as %p and %p; want one compiled module, shared", modules[0], modules[1])
	}
	if _, err := decisionModule(context.Background(), []byte("not wasm")); err == nil {
		t.Fatal("decisionModule(not wasm): no error")
	}
	decisions.Lock()
	defer decisions.Unlock()
	if decisions.module != modules[0] {
		t.Fatal("a module that does not compile replaced the compiled one")
	}
}

// TestWasmEngineDecidesWithPlans: resolve --engine wasm refuses a
// version no plan can hold with plan_unsupported at its position, before
// any module starts, and decides the other versions of the same folder.
func TestWasmEngineDecidesWithPlans(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the WebAssembly module; skipped with -short")
	}
	dir := t.TempDir()
	if err := ruletest.WriteDir(dir, planUnsupported(t)); err != nil {
		t.Fatal(err)
	}
	_, stderr, status := runCommand("resolve", "--engine", "wasm", "--rules", dir, "--ruleset", "jax@v3", "--platform", "cpu", "--platform-version", "cpu")
	if status != 1 || !strings.Contains(stderr, "jax/v3/rules.yaml:52:42: rule ") || !strings.Contains(stderr, "function matches") || strings.Contains(stderr, "building") {
		t.Errorf("resolve --engine wasm of a version no plan holds: status %d, stderr:\n%s\nwant 1, plan_unsupported at rules.yaml:52:42, no module built", status, stderr)
	}
	// The other versions of the same folder decide.
	stdout, stderr, status := runCommand("resolve", "--engine", "wasm", "--rules", dir, "--ruleset", "jax@v2", "--platform", "cpu", "--platform-version", "cpu")
	if status != 0 || !strings.Contains(stdout, `"ruleset":"jax@v2"`) {
		t.Errorf("resolve --engine wasm --ruleset jax@v2 beside it: status %d, %s%s", status, stdout, stderr)
	}
}

// planUnsupported is the rules of ruletest.Rules with one expression of
// jax@v3 that cel-go compiles and lint accepted before plans were checked,
// but that no plan holds: a regular expression (matches), at
// jax/v3/rules.yaml:52:42.
func planUnsupported(t *testing.T) fstest.MapFS {
	t.Helper()
	fsys := ruletest.Rules()
	f := fsys["jax/v3/rules.yaml"]
	const old = "when: shards != 1"
	if !bytes.Contains(f.Data, []byte(old)) {
		t.Fatalf("jax/v3/rules.yaml has no %q", old)
	}
	fsys["jax/v3/rules.yaml"] = &fstest.MapFile{Data: bytes.Replace(f.Data, []byte(old), []byte(old+" && platform.matches('^g')"), 1)}
	return fsys
}

// runCommand runs dlroute with args and no stdin.
func runCommand(args ...string) (stdout, stderr string, status int) {
	var out, errOut strings.Builder
	status = run(args, strings.NewReader(""), &out, &errOut)
	return out.String(), errOut.String(), status
}
