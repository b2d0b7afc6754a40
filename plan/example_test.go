package plan_test

import (
	"encoding/json"
	"fmt"

	"github.com/dlroute/dlroute/engine"
	"github.com/dlroute/dlroute/plan"
	"github.com/dlroute/dlroute/rules"
)

// The engine builds a plan where cel-go is; a host without it decodes
// the bytes and decides.
func Example() {
	cat, _ := engine.Load(rules.FS, engine.Options{})
	rs, _ := cat.RuleSet("jax@v3")
	data, _ := rs.Plan()

	p, err := plan.Decode(data)
	if err != nil {
		fmt.Println(err)
		return
	}
	out, err := p.Decide([]byte(`{"platform":"gpu","platform_version":"rocm 6.0","local_hardware_id":0}`))
	fmt.Println(string(out), err)
	// Output: {"device_type":"kDLROCM","device_type_code":10,"device_id":0,"rule":"gpu","ruleset":"jax@v3"} <nil>
}

// rules.Plans is every embedded version's plan in one set: a host that
// only decides takes the version it needs from it.
func ExampleDecodeSet() {
	entries, err := plan.DecodeSet(rules.Plans)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, e := range entries {
		if e.Ref == "numpy@v2" {
			p, _ := plan.Decode(e.Plan)
			fmt.Println(p.Ref, len(p.Rules) > 0)
		}
	}
	// Output: numpy@v2 true
}

// An explanation is the decision, the rules tried in order, and every
// value with what it evaluated to, as `dlroute resolve --explain` shows
// them.
func ExamplePlan_ExplainJSON() {
	entries, _ := plan.DecodeSet(rules.Plans)
	for _, e := range entries {
		if e.Ref != "jax@v3" {
			continue
		}
		p, _ := plan.Decode(e.Plan)
		out, err := p.ExplainJSON([]byte(`{"platform":"cpu","platform_version":"cpu","local_hardware_id":0}`))
		if err != nil {
			fmt.Println(err)
			return
		}
		var x struct {
			Decision struct{ Rule string }
			Trace    struct {
				Rules []struct {
					Rule    string
					Matched bool
				}
			}
		}
		json.Unmarshal(out, &x)
		fmt.Println("decided by", x.Decision.Rule)
		for _, r := range x.Trace.Rules {
			fmt.Println(r.Rule, r.Matched)
		}
	}
	// Output:
	// decided by cpu
	// sharded false
	// cpu true
}
