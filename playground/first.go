package playground

import (
	"context"
	"encoding/json"
	"io/fs"
	"time"

	"github.com/dlroute/dlroute/engine"
	shipped "github.com/dlroute/dlroute/rules"
)

// seedInput is the input the page opens with: examples.js's first
// example (the seed's unknown GPU platform), as JSON.stringify writes it.
// The page shows the served decision only when its own first input and
// rule set are these, so a change on one side and not the other costs
// the page its head start, never a wrong decision; the browser test of
// the first screen fails on it.
const seedInput = `{"platform":"gpu","platform_version":"<unknown>","local_hardware_id":0}`

// firstTimeout bounds the first decision's evaluation: rules served with
// --rules are anyone's, and a page waits for its engine rather than a
// server for a decision that does not end.
const firstTimeout = 2 * time.Second

// firstDecision is rules.json's "first": what the page's engine answers
// for its first screen, the newest jax with seedInput, decided natively by
// the engine the module wraps (the module's dlroute_explain_json is
// RuleSet.Explain marshalled, and its dlroute_describe's inputs are
// RuleSet.Inputs), so that the page can show it while the module
// downloads, compiles and starts (playground/RATIONALE.md, "Why does the server
// decide the page's first case?"). The page decides it again once its
// engine has started, and says so if the two differ.
type firstDecision struct {
	Ref   string `json:"ref"`
	Input string `json:"input"`
	// Explanation is the decision with its trace, as dlroute_explain_json
	// writes it; Inputs are the declared inputs the page's form is built
	// from, as dlroute_describe lists them.
	Explanation json.RawMessage    `json:"explanation"`
	Inputs      []engine.InputDecl `json:"inputs"`
}

// decideFirst is the first screen's decision with rules, or nil where
// the rules have no jax that compiles and decides seedInput: the page
// then waits for its own engine, as it does for a link to another state.
// It compiles only the newest jax, without its tests, as the page's
// engine does for its first decision.
func decideFirst(rules fs.FS) *firstDecision {
	cat, err := engine.Load(rules, engine.Options{Select: []string{"jax"}, SkipTests: true, TrustParsed: shipped.Embedded(rules), Cache: loads})
	if err != nil {
		return nil
	}
	rs, err := cat.RuleSet("jax")
	if err != nil {
		return nil
	}
	in, err := rs.DecodeInput([]byte(seedInput))
	if err != nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), firstTimeout)
	defer cancel()
	x, err := rs.Explain(ctx, in)
	if err != nil {
		return nil
	}
	explanation, err := x.MarshalJSON()
	if err != nil {
		return nil
	}
	return &firstDecision{Ref: rs.Ref(), Input: seedInput, Explanation: explanation, Inputs: rs.Inputs()}
}
