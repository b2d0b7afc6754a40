package playground

import (
	"encoding/json"
	"io/fs"
	"slices"

	"github.com/dlroute/dlroute/engine"
	"github.com/dlroute/dlroute/internal/contract"
	"github.com/dlroute/dlroute/plan"
	shipped "github.com/dlroute/dlroute/rules"
)

// The page decides with the decision module (wasm/decision, ABI version
// 2) and the plans of the rules served, from its first decision: a module
// of tens of KB, where the compiler module is 24 MB and starts in seconds. The
// compiler module loads when the page needs what plans lack: rules the
// person edited, and the trace and the tests (playground/RATIONALE.md, "Why does the
// page decide with plans first?").

// servedPlans is what the page decides with before the compiler module
// has started: plans.bin, the versions it holds, and every version's
// description (what dlroute_describe answers), from which the page builds
// its input form.
type servedPlans struct {
	set       []byte                          // plans.bin: plan.EncodeSet of refs' plans
	refs      []string                        // the versions set holds
	described map[string]contract.Description // by ref: every version that compiles
}

// rulesPlans compiles rules natively, without their tests, into the plans
// the page decides with: the embedded rules' plans.bin as generated, or a
// served directory's, built here. A version outside the CEL a plan holds
// (engine.CodePlanUnsupported) is left out of the set, and the page
// decides it with the compiler module; rules that do not load give no
// plans at all, and the page shows their errors from the compiler
// module, as before.
func rulesPlans(rules fs.FS) *servedPlans {
	embedded := shipped.Embedded(rules)
	cat, err := engine.Load(rules, engine.Options{SkipTests: true, TrustParsed: embedded, Cache: loads})
	if err != nil {
		return nil
	}
	out := &servedPlans{described: map[string]contract.Description{}}
	var entries []plan.Entry
	if embedded {
		// rules/plans.bin as generated: the versions it holds (a version
		// added since it was generated is the compiler module's, until
		// `go generate ./rules`, which rules/plans_test.go asks for).
		if entries, err = plan.DecodeSet(shipped.Plans); err != nil {
			return nil
		}
		for _, e := range entries {
			out.refs = append(out.refs, e.Ref)
		}
		out.set = shipped.Plans
	}
	for _, rs := range cat.RuleSets() {
		out.described[rs.Ref()] = contract.Description{Ref: rs.Ref(), Inputs: rs.Inputs(), Rules: rs.RuleIDs(), DeviceTypes: rs.DeviceTypes()}
		if embedded {
			continue
		}
		data, err := rs.Plan()
		if err != nil {
			continue
		}
		entries = append(entries, plan.Entry{Ref: rs.Ref(), Plan: data})
		out.refs = append(out.refs, rs.Ref())
	}
	if !embedded {
		out.set = plan.EncodeSet(entries)
	}
	return out
}

// plansIf is rulesPlans(rules) when with is set, else nil.
func plansIf(with bool, rules fs.FS) *servedPlans {
	if !with {
		return nil
	}
	return rulesPlans(rules)
}

// plansDoc is rules.json's "plans": which plans.bin goes with these rules
// (its ETag) and the versions it holds, so that the page decides a
// version with the decision module only where plans.bin has it, and
// fetches plans.bin again when the rules changed under a page that had
// fetched it before.
type plansDoc struct {
	ETag string   `json:"etag"`
	Refs []string `json:"refs"`
}

// firstCase is first.json: the page's first case (rules.json's "first",
// without its explanation), the ETag of the plans.bin it is decided with,
// and a set of that one version's plan from it (base64 in the JSON). The
// page decides it on its main thread as soon as the module and this have
// arrived, before plans.bin, its own modules and rules.json
// (playground/RATIONALE.md, "Why does the page decide its first case on
// its main thread?").
type firstCase struct {
	Ref   string `json:"ref"`
	Input string `json:"input"`
	Plans string `json:"plans"`
	Set   []byte `json:"set"`
}

// firstJSON is first.json for the first decision and the plans (set, and
// its ETag); nil where there is no first case, or the plans do not hold
// its version.
func firstJSON(first *firstDecision, set []byte, etag string) ([]byte, error) {
	if first == nil {
		return nil, nil
	}
	entries, err := plan.DecodeSet(set)
	if err != nil {
		return nil, err
	}
	i := slices.IndexFunc(entries, func(e plan.Entry) bool { return e.Ref == first.Ref })
	if i < 0 {
		return nil, nil
	}
	return json.Marshal(firstCase{Ref: first.Ref, Input: first.Input, Plans: etag, Set: plan.EncodeSet(entries[i : i+1])})
}

// planFiles are the files served with the plans: plans.bin and
// first.json, replaced together when the rules change.
type planFiles struct {
	set, first *resource // first is nil where there is no first.json
}

// newPlanFiles makes planFiles of rf; nil where the rules have no plans.
func newPlanFiles(rf ruleFiles) (*planFiles, error) {
	if rf.plans == nil {
		return nil, nil
	}
	pf := &planFiles{}
	var err error
	if pf.set, err = newResource("plans.bin", rf.plans, nil); err != nil {
		return nil, err
	}
	if rf.first != nil {
		if pf.first, err = newResource("first.json", rf.first, nil); err != nil {
			return nil, err
		}
	}
	return pf, nil
}

// get is the resource named name ("plans.bin" or "first.json"), and
// whether there is one; pf may be nil.
func (pf *planFiles) get(name string) (*resource, bool) {
	if pf == nil {
		return nil, false
	}
	r := map[string]*resource{"plans.bin": pf.set, "first.json": pf.first}[name]
	return r, r != nil
}
