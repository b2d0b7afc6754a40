package guest

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/dlroute/dlroute/engine"
	"github.com/dlroute/dlroute/internal/contract"
	"github.com/dlroute/dlroute/rules"
)

// loaded returns a guest with the embedded rules, loaded as hosts load
// them (LoadLazy: Load itself is TestGuestLoad*'s), and the handle of jax.
func loaded(t *testing.T, ask AskPlatformVersion) (*Guest, uint32) {
	t.Helper()
	archive, err := contract.PackFS(rules.FS)
	if err != nil {
		t.Fatal(err)
	}
	g := New(Host{PlatformVersion: ask})
	if out, status := g.LoadLazy(archive); status != contract.StatusOK {
		t.Fatalf("LoadLazy: %s %s", status, out)
	}
	h, out, status := g.RuleSet("jax")
	if status != contract.StatusOK {
		t.Fatalf("RuleSet: %s %s", status, out)
	}
	return g, h
}

func TestGuestBeforeLoad(t *testing.T) {
	g := New(Host{})
	if _, _, status := g.RuleSet("jax"); status != contract.StatusNotLoaded {
		t.Errorf("RuleSet before Load: %s, want %s", status, contract.StatusNotLoaded)
	}
	if _, status := g.Resolve(context.Background(), 1, nil); status != contract.StatusBadHandle {
		t.Errorf("Resolve with no handle: %s, want %s", status, contract.StatusBadHandle)
	}
}

func TestGuestLoadKeepsRulesOnError(t *testing.T) {
	g, h := loaded(t, nil)
	out, status := g.Load([]byte("\x05\x00\x00\x00../x"))
	if status != contract.StatusLoadError || !strings.Contains(string(out), "truncated") {
		t.Errorf("Load of a broken archive: %s %s", status, out)
	}
	if out, status := g.ResolveJSON(context.Background(), h, []byte(`{"platform":"cpu","platform_version":"cpu"}`)); status != contract.StatusOK {
		t.Errorf("after a refused load: %s %s", status, out)
	}
	if h2, _, _ := g.RuleSet("jax"); h2 != h {
		t.Errorf("the same rule set got handle %d, then %d", h, h2)
	}
	if _, out, status := g.RuleSet("nosuchlib"); status != contract.StatusNoRuleSet || !strings.Contains(string(out), `"code":"no_ruleset"`) {
		t.Errorf("RuleSet(nosuchlib): %s %s", status, out)
	}
}

func TestGuestResolveBinary(t *testing.T) {
	g, h := loaded(t, nil)
	var desc contract.Description
	out, _ := g.Describe(h)
	if err := json.Unmarshal(out, &desc); err != nil || desc.Ref != "jax@v3" || desc.Inputs[0].Name != "platform" {
		t.Fatalf("Describe: %s (%v)", out, err)
	}
	var in []byte
	for _, d := range desc.Inputs {
		v, present := map[string]any{"platform": "gpu", "platform_version": "PJRT C API\nrocm 60200", "memory_kind": "pinned_host", "local_hardware_id": 3}[d.Name]
		in, _ = contract.AppendField(in, v, present)
	}
	out, status := g.Resolve(context.Background(), h, in)
	d, err := contract.DecodeDecision(out)
	if status != contract.StatusOK || err != nil || d.Kind != contract.KindDevice || d.Code != 11 || d.ID != 3 || desc.Rules[d.Rule] != "gpu" {
		t.Errorf("Resolve: %s %+v %v, want kDLROCMHost (11), device 3, rule gpu", status, d, err)
	}
	if _, status := g.Resolve(context.Background(), h, in[:len(in)-2]); status != contract.StatusBadArgument {
		t.Errorf("a truncated binary input: %s, want %s", status, contract.StatusBadArgument)
	}
}

func TestGuestAsksTheHost(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name   string
		ask    AskPlatformVersion
		status contract.Status
		want   string
	}{
		{"the host answers", func(int) (string, error) { return "oneapi 2026.0", nil }, contract.StatusOK, `"device_type":"kDLOneAPI"`},
		{"the host reads no machine", func(int) (string, error) { return "", ErrNoAnswer }, contract.StatusInputError, "input platform_version is missing; want string"},
		{"the host fails", func(int) (string, error) { return "", errors.New("driver stuck") }, contract.StatusHostError, "could not read device 2: driver stuck"},
	}
	for _, tt := range tests {
		g, h := loaded(t, tt.ask)
		out, status := g.ResolveJSON(ctx, h, []byte(`{"platform":"gpu","local_hardware_id":2}`))
		if status != tt.status || !strings.Contains(string(out), tt.want) {
			t.Errorf("%s: ResolveJSON = %s %s, want %s with %q", tt.name, status, out, tt.status, tt.want)
		}
	}
}

func TestGuestErrorsAreEngineErrors(t *testing.T) {
	g, h := loaded(t, nil)
	out, status := g.ResolveJSON(context.Background(), h, []byte(`{"platform":"gpu","platform_version":"cuda","colour":"red"}`))
	var e engine.Error
	if status != contract.StatusInputError || json.Unmarshal(out, &e) != nil || e.Code != engine.CodeUnknownField || e.Hint == "" {
		t.Errorf("an unknown field: %s %s, want input_error with code unknown_field and a hint", status, out)
	}
}

// TestGuestHostFailureIsOneStatus: the binary and JSON entries give the
// same status when the host fails to read the machine.
func TestGuestHostFailureIsOneStatus(t *testing.T) {
	g, h := loaded(t, func(int) (string, error) { return "", errors.New("driver stuck") })
	var desc contract.Description
	out, _ := g.Describe(h)
	json.Unmarshal(out, &desc)
	var in []byte
	for _, d := range desc.Inputs {
		v, present := map[string]any{"platform": "gpu", "local_hardware_id": 0}[d.Name]
		in, _ = contract.AppendField(in, v, present)
	}
	_, binary := g.Resolve(context.Background(), h, in)
	_, jsonStatus := g.ResolveJSON(context.Background(), h, []byte(`{"platform":"gpu","local_hardware_id":0}`))
	if binary != contract.StatusHostError || jsonStatus != contract.StatusHostError {
		t.Errorf("host failure: binary entry %s, JSON entry %s; want %s from both", binary, jsonStatus, contract.StatusHostError)
	}
}

// TestGuestExplainJSON: an explanation is the native engine's, byte for
// byte; one whose platform_version is left out asks the host first; a
// line over the answerer's limit is too_long, as every host answers it.
func TestGuestExplainJSON(t *testing.T) {
	asked := 0
	g, h := loaded(t, func(int) (string, error) { asked++; return "cuda 12030", nil })
	cat, err := engine.Load(rules.FS, engine.Options{Select: []string{"jax"}})
	if err != nil {
		t.Fatal(err)
	}
	native, _ := cat.RuleSet("jax")
	ctx := context.Background()
	line := []byte(`{"platform":"gpu","platform_version":"cuda 12030","local_hardware_id":0}`)
	want, err := native.ExplainJSON(ctx, line)
	if err != nil {
		t.Fatal(err)
	}
	if got, status := g.ExplainJSON(ctx, h, line); status != contract.StatusOK || string(got) != string(want) {
		t.Errorf("ExplainJSON(%s) = %s %s, want the native\n%s", line, status, got, want)
	}
	if got, status := g.ExplainJSON(ctx, h, []byte(`{"platform":"gpu","local_hardware_id":0}`)); status != contract.StatusOK || string(got) != string(want) || asked != 1 {
		t.Errorf("ExplainJSON without platform_version = %s %s (host asked %d times), want the native\n%s", status, got, asked, want)
	}
	long := []byte(`{"platform":"` + strings.Repeat("x", contract.MaxLineLen) + `"}`)
	for name, call := range map[string]func() ([]byte, contract.Status){
		"ExplainJSON": func() ([]byte, contract.Status) { return g.ExplainJSON(ctx, h, long) },
		"ResolveJSON": func() ([]byte, contract.Status) { return g.ResolveJSON(ctx, h, long) },
	} {
		out, status := call()
		if status != contract.StatusInputError || !strings.Contains(string(out), `"code":"too_long"`) {
			t.Errorf("%s of a %d-byte line = %s %.200s, want input_error too_long", name, len(long), status, out)
		}
	}
}
