package live

import (
	"io/fs"

	"github.com/dlroute/dlroute/bundle"
	"github.com/dlroute/dlroute/engine"
	"github.com/dlroute/dlroute/plan"
)

// Plans builds the plan of every version of cat (engine.RuleSet.Plan), by
// ref. The gate runs it on every candidate once it compiles, and `dlroute
// lint` on every rules folder, so that the rules one accepts the other
// does, and every host decides them: with the engine (native serve), or
// with the decision module (serve --engine wasm), which decides with
// plans alone. A version with an expression outside the CEL a plan
// covers is its engine.CodePlanUnsupported error, at the expression's
// position in the rule file; the error is an engine.ErrorList of each
// such error once (a version that imports another meets the other's
// errors again).
func Plans(cat *engine.Catalog) (map[string][]byte, error) {
	return PlansOf(cat.RuleSets())
}

// PlansOf is Plans of the versions given, each once: `dlroute plan`'s
// versions asked for.
func PlansOf(versions []*engine.RuleSet) (map[string][]byte, error) {
	plans := map[string][]byte{}
	var errs engine.ErrorList
	seen := map[string]bool{}
	for _, rs := range versions {
		if _, done := plans[rs.Ref()]; done {
			continue
		}
		data, err := rs.Plan()
		if err != nil {
			list := engine.Errors(err)
			if len(list) == 0 {
				list = []*engine.Error{{Code: engine.CodePlanUnsupported, Message: rs.Ref() + ": " + err.Error()}}
			}
			for _, e := range list {
				if key := string(e.Code) + " " + e.Error(); !seen[key] {
					seen[key] = true
					errs = append(errs, e)
				}
			}
			continue
		}
		plans[rs.Ref()] = data
	}
	if len(errs) > 0 {
		return nil, errs
	}
	return plans, nil
}

// BundlePlans returns the plans.bin that a bundle of the rules of fsys
// carries (bundle.BuildOptions.Plans): every version's plan as one set
// (plan.EncodeSet), with positions under the default root, "rules", as in
// rules/plans.bin, so that the same rules give the same bytes wherever
// they are built or read (a plan's positions name its rules by
// engine.Options.Root). opts configures engine.Load as Gate.Load does,
// and its Root, Reuse and Select are not used. `dlroute bundle build`
// packs what it returns; the gate checks a bundle's plans.bin against it.
// A version no plan can hold is its Plans error.
func BundlePlans(fsys fs.FS, opts engine.Options) ([]byte, error) {
	opts.Root, opts.Reuse, opts.Select = "", nil, nil
	cat, err := engine.Load(fsys, opts)
	if err != nil {
		return nil, err
	}
	plans, err := Plans(cat)
	if err != nil {
		return nil, err
	}
	return encodeSet(plans), nil
}

// checkBundlePlans refuses a bundle whose plans.bin is not what the
// engine builds from its rules (bundle.CodePlansMismatch): a host that
// decides with the bundle's plans must decide what its rules say.
func checkBundlePlans(b *bundle.Bundle, opts engine.Options) error {
	if b.Plans() == nil {
		return nil
	}
	want, err := BundlePlans(b.FS(), opts)
	if err != nil {
		return err
	}
	return b.CheckPlans(want)
}

func encodeSet(plans map[string][]byte) []byte {
	entries := make([]plan.Entry, 0, len(plans))
	for ref, data := range plans {
		entries = append(entries, plan.Entry{Ref: ref, Plan: data})
	}
	return plan.EncodeSet(entries)
}

// PlanSet returns every version's plan as one set (plan.EncodeSet), for
// a host that hands the decision module a set (its dlroute_load_set):
// the bundle's plans.bin when it carries one, which the gate checked is
// what the engine builds from its rules (BundlePlans: positions under
// "rules"); otherwise the plans the gate built (Plan), positions under
// the snapshot's Origin, encoded on each call. Do not modify it.
func (s *Snapshot) PlanSet() []byte {
	if p := s.bundle.Plans(); p != nil {
		return p
	}
	return encodeSet(s.plans)
}
