package engine_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/dlroute/dlroute/engine"
	"github.com/dlroute/dlroute/rules"
)

// steps is a trace's rules as "id:matched" and its values as
// "name=json(used)", for comparing in one line.
func steps(tr engine.Trace) (rules, values string) {
	var r, v []string
	for _, s := range tr.Rules {
		r = append(r, fmt.Sprintf("%s:%t", s.Rule, s.Matched))
	}
	for _, s := range tr.Values {
		val := fmt.Sprint(s.Value)
		if s.Error != "" {
			val = "error"
		}
		v = append(v, fmt.Sprintf("%s=%s(%t)", s.Name, val, s.Used))
	}
	return strings.Join(r, " "), strings.Join(v, " ")
}

func TestExplainSaysWhichMarkerMatchedWhere(t *testing.T) {
	rs := loadRuleSet(t, "jax@v3")
	in := engine.Input{"platform": "gpu", "platform_version": "PJRT C API\nrocm 60200", "local_hardware_id": 0}
	x, err := rs.Explain(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	d, _ := rs.Resolve(context.Background(), in)
	if !x.Decision.Equal(d) {
		t.Errorf("Explain decided %s; Resolve %s", x.Decision, d)
	}
	gotRules, gotValues := steps(x.Trace)
	if want := "sharded:false cpu:false gpu-unknown-platform:false gpu-no-hardware-id:false gpu:true"; gotRules != want {
		t.Errorf("rules tried:\n got %s\nwant %s", gotRules, want)
	}
	// rocm starts at byte 11, after "PJRT C API\n"; nothing reads
	// gpu_marker_at, so it is computed for the explanation only.
	if want := "gpu_matches=[map[device:10 marker:rocm pinned_host:11]](true) gpu_marker_at=11(false) gpu_device=10(true)"; gotValues != want {
		t.Errorf("values:\n got %s\nwant %s", gotValues, want)
	}
	if p := x.Trace.Rules[4].Position; p.File != "rules/jax/v3/rules.yaml" || p.Line == 0 {
		t.Errorf("rule gpu at %s; want a line of rules/jax/v3/rules.yaml", p)
	}
}

func TestExplainAnImport(t *testing.T) {
	rs := loadRuleSet(t, "exchange@v2")
	x, err := rs.Explain(context.Background(), engine.Input{"platform": "gpu", "platform_version": "<unknown>", "local_hardware_id": 0, "max_version": []any{1, 1}})
	if err != nil {
		t.Fatal(err)
	}
	if x.Decision.Rule != "unknown-platform-host-copy" || !x.Decision.Copy || x.Decision.Flags != engine.FlagIsCopied {
		t.Errorf("decision %s; want the host copy with IS_COPIED", x.Decision)
	}
	imp := x.Trace.Values[0]
	if imp.Name != "jax" || imp.Import == nil || imp.Import.Decision.Rule != "gpu-unknown-platform" || !imp.Used {
		t.Fatalf("first value %+v; want the jax import, explained, used", imp)
	}
	if r, _ := steps(imp.Import.Trace); r != "sharded:false cpu:false gpu-unknown-platform:true" {
		t.Errorf("the import's rules: %s", r)
	}
}

// An evaluation that fails is explained up to the failure.
func TestExplainAFailure(t *testing.T) {
	fsys := versionFS(t, "v3")
	edit(t, fsys, "jax/v3/rules.yaml", "when: platform == 'cpu'", "when: platform == 'cpu' && gpu_device == 1")
	cat, err := engine.Load(fsys, engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	rs, _ := cat.RuleSet("jax")
	x, err := rs.Explain(context.Background(), engine.Input{"platform": "cpu", "platform_version": "cpu"})
	var e *engine.Error
	if !errors.As(err, &e) || e.Code != engine.CodeEval {
		t.Fatalf("Explain: %v; want eval_error", err)
	}
	r, v := steps(x.Trace)
	if r != "sharded:false cpu:false" || !strings.Contains(v, "gpu_device=error(true)") {
		t.Errorf("trace up to the failure:\n rules %s\nvalues %s", r, v)
	}
	if x.Trace.Rules[1].Error == "" {
		t.Error("the failing rule's step has no error")
	}
}

func ExampleRuleSet_Explain() {
	cat, _ := engine.Load(rules.FS, engine.Options{Select: []string{"jax@v3"}})
	rs, _ := cat.RuleSet("jax@v3")
	x, err := rs.Explain(context.Background(), engine.Input{"platform": "gpu", "platform_version": "mycudafork 1.0", "local_hardware_id": 0})
	if err != nil {
		panic(err)
	}
	fmt.Println(x.Decision)
	for _, r := range x.Trace.Rules {
		fmt.Println("tried", r.Rule, r.Matched)
	}
	for _, v := range x.Trace.Values {
		fmt.Println(v.Name, "=", v.Value)
	}
	// Output:
	// {"device_type":"kDLCUDA","device_type_code":2,"device_id":0,"rule":"gpu","ruleset":"jax@v3"}
	// tried sharded false
	// tried cpu false
	// tried gpu-unknown-platform false
	// tried gpu-no-hardware-id false
	// tried gpu true
	// gpu_matches = [map[device:2 marker:cuda pinned_host:3]]
	// gpu_marker_at = 2
	// gpu_device = 2
}
