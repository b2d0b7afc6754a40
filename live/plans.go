package live

import "github.com/dlroute/dlroute/engine"

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
	plans := map[string][]byte{}
	var errs engine.ErrorList
	seen := map[string]bool{}
	for _, rs := range cat.RuleSets() {
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
