package serve

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/dlroute/dlroute/engine"
	"github.com/dlroute/dlroute/hostfuncs"
	"github.com/dlroute/dlroute/internal/ruletest"
	"github.com/dlroute/dlroute/internal/wasmbuild"
	"github.com/dlroute/dlroute/live"
)

// TestWasmEngine serves through the module: every case of every version
// is answered byte for byte as natively, and a new version swaps in a
// runner of its own.
func TestWasmEngine(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the WebAssembly module")
	}
	module, _, err := wasmbuild.Module(context.Background(), wasmbuild.Options{})
	if err != nil {
		t.Fatal(err)
	}
	native := newTestServer(t, live.Static("rules", ruletest.Rules()), Config{})
	compiled, err := hostfuncs.Compile(context.Background(), hostfuncs.RunnerConfig{Module: module})
	if err != nil {
		t.Fatal(err)
	}
	defer compiled.Close(context.Background())
	rules, err := live.Open(context.Background(), live.Config{
		Source: live.Static("rules", ruletest.Rules()),
		Gate:   live.Gate{Prepare: WasmPrepare(compiled)},
	})
	if err != nil {
		t.Fatalf("live.Open with the module: %v", err)
	}
	defer rules.Close()
	wasm := newHandlerServer(t, Config{Rules: rules, Engine: "wasm"})

	cat, _ := engine.Load(ruletest.Rules(), engine.Options{})
	for _, rs := range cat.RuleSets() {
		var inputs []string
		for _, c := range rs.Cases() {
			inputs = append(inputs, inputJSON(t, c.Input))
		}
		body := "[" + strings.Join(inputs, ",") + "]"
		_, _, want := native.post(t, "?ruleset="+rs.Ref(), body)
		_, _, got := wasm.post(t, "?ruleset="+rs.Ref(), body)
		if got != want {
			t.Errorf("%s: the module answered\n%s\nnatively\n%s", rs.Ref(), got, want)
		}
	}

	old := rules.Current()
	if err := rules.Offer(context.Background(), &live.Candidate{Origin: "b", Dir: ruletest.WithMarker(ruletest.Rules(), "nvfork")}); err != nil {
		t.Fatalf("Offer: %v", err)
	}
	if rules.Current().Attached() == old.Attached() {
		t.Fatal("the new version shares the old one's runner")
	}
	if _, _, got := wasm.post(t, "", `{"platform":"gpu","platform_version":"nvfork 1.0","local_hardware_id":0}`); !strings.Contains(got, `"device_type":"kDLCUDA"`) {
		t.Errorf("after the swap, the module decided nvfork as %s", got)
	}
}

func inputJSON(t *testing.T, in engine.Input) string {
	t.Helper()
	b, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
