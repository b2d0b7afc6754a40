package engine

import (
	"io/fs"

	"github.com/dlroute/dlroute/plan"
)

// PlansFile is the name of the set of plans beside the embedded rules
// (rules/plans.bin): every version's plan, which a host that only decides
// embeds instead of the rules (the decision module, wasm/decision).
const PlansFile = "plans.bin"

// WritePlans loads the rules of fsys and returns the plans of every
// version as one set (plan.EncodeSet), deterministic: the same rules
// give the same bytes. Positions in the plans name the rules by
// opts.Root, as the engine's errors do. A version outside the CEL a plan
// covers fails the whole set with its CodePlanUnsupported error.
func WritePlans(fsys fs.FS, opts Options) ([]byte, error) {
	opts.Cache, opts.Reuse, opts.Select = nil, nil, nil
	cat, err := Load(fsys, opts)
	if err != nil {
		return nil, err
	}
	var entries []plan.Entry
	for _, rs := range cat.RuleSets() {
		data, err := rs.Plan()
		if err != nil {
			return nil, err
		}
		entries = append(entries, plan.Entry{Ref: rs.Ref(), Plan: data})
	}
	return plan.EncodeSet(entries), nil
}
