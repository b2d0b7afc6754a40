package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/dlroute/dlroute/engine"
	"github.com/dlroute/dlroute/rules"
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
}
