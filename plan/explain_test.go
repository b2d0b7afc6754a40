package plan_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/dlroute/dlroute/engine"
	"github.com/dlroute/dlroute/internal/testkit/corpus"
	"github.com/dlroute/dlroute/plan"
	"github.com/dlroute/dlroute/rules"
)

// shippedPlans are the plans of rules/plans.bin, by version: what the
// decision module loads.
func shippedPlans(t *testing.T) map[string]*plan.Plan {
	t.Helper()
	entries, err := plan.DecodeSet(rules.Plans)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]*plan.Plan{}
	for _, e := range entries {
		p, err := plan.Decode(e.Plan)
		if err != nil {
			t.Fatalf("%s: %v", e.Ref, err)
		}
		out[e.Ref] = p
	}
	return out
}

// TestExplainMatchesEngineOnCorpus: the shipped plans explain every line
// of the corpus (every tests.yaml case of every version, testdata/corpus
// and the lines at the limits) with the engine's bytes, and refuse what
// it refuses with its error.
func TestExplainMatchesEngineOnCorpus(t *testing.T) {
	cat, err := engine.Load(rules.FS, engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	plans := shippedPlans(t)
	ctx := context.Background()
	for _, c := range corpus.Load(t, "..") {
		rs, err := cat.RuleSet(c.Ref)
		if err != nil {
			t.Fatal(err)
		}
		p := plans[c.Ref]
		if p == nil {
			t.Errorf("rules/plans.bin has no plan of %s", c.Ref)
			continue
		}
		for _, l := range c.Lines {
			want, werr := rs.ExplainJSON(ctx, l.Data)
			got, gerr := p.ExplainJSON(l.Data)
			if werr != nil || gerr != nil {
				w, _ := json.Marshal(werr)
				g, _ := json.Marshal(gerr)
				if string(w) != string(g) {
					t.Errorf("%s %s: ExplainJSON error\n got %s\nwant %s", c.Ref, l.Origin, g, w)
				}
				continue
			}
			if string(got) != string(want) {
				t.Errorf("%s %s: ExplainJSON(%.80s)\n got %.300s\nwant %.300s", c.Ref, l.Origin, l.Data, got, want)
			}
		}
	}
}

// TestExplainJSON: an explanation names the rules tried in order, the
// one that decided last, and each value with whether the decision read
// it; an input the plan refuses is its input error, as Decide's.
func TestExplainJSON(t *testing.T) {
	p := shippedPlans(t)["jax@v3"]
	out, err := p.ExplainJSON([]byte(`{"platform":"gpu","platform_version":"PJRT C API\nrocm 60200","local_hardware_id":0}`))
	if err != nil {
		t.Fatal(err)
	}
	var x struct {
		Decision struct{ DeviceType, Rule string } `json:"decision"`
		Trace    struct {
			Rules []struct {
				Rule     string
				Matched  bool
				Position struct{ File string }
			}
			Values []struct {
				Name  string
				Value any
				Used  bool
			}
		}
	}
	if err := json.Unmarshal(out, &x); err != nil {
		t.Fatalf("ExplainJSON answered %s: %v", out, err)
	}
	var rules []string
	for _, r := range x.Trace.Rules {
		rules = append(rules, r.Rule)
		if r.Position.File != "rules/jax/v3/rules.yaml" {
			t.Errorf("rule %s at %q; want rules/jax/v3/rules.yaml", r.Rule, r.Position.File)
		}
	}
	if got, want := strings.Join(rules, " "), "sharded cpu gpu-unknown-platform gpu-no-hardware-id gpu"; got != want || !x.Trace.Rules[4].Matched {
		t.Errorf("rules tried %s; want %s, the last matched", got, want)
	}
	for _, v := range x.Trace.Values {
		if v.Name == "gpu_marker_at" && (v.Used || v.Value != 11.0) {
			t.Errorf("gpu_marker_at = %v, used %t; want 11, computed for the explanation only", v.Value, v.Used)
		}
	}
	_, err = p.ExplainJSON([]byte(`{"platform":"gpu"}`))
	var e *plan.Error
	if !errors.As(err, &e) || e.Code != plan.CodeMissingField {
		t.Errorf("ExplainJSON(no platform_version) = %v; want %s", err, plan.CodeMissingField)
	}
}

// TestExplainStopsAtItsStepLimit: an explanation is bounded as a
// decision is, at ExplainStepFactor times the plan's step limit.
func TestExplainStopsAtItsStepLimit(t *testing.T) {
	p := shippedPlans(t)["jax@v3"]
	p.StepLimit = 3
	_, err := p.ExplainJSON([]byte(`{"platform":"gpu","platform_version":"cuda 12030","local_hardware_id":0}`))
	var e *plan.Error
	if !errors.As(err, &e) || e.Code != plan.CodeCostLimit || e.Pos == nil {
		t.Errorf("ExplainJSON with StepLimit 3 = %v; want a %s error at an expression", err, plan.CodeCostLimit)
	}
}
