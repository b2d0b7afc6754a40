package playground

import (
	"context"
	"encoding/json"
	"io/fs"
	"time"

	"github.com/dlroute/dlroute/internal/abi"
	"github.com/dlroute/dlroute/internal/guest"
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
// for its first screen, the newest jax with seedInput, decided by the same
// code the module runs (package guest, natively), so that the page can
// show it while the module downloads, compiles and starts (RATIONALE.md,
// "Why does the server decide the page's first case?"). The page decides
// it again once its engine has started, and says so if the two differ.
type firstDecision struct {
	Ref   string `json:"ref"`
	Input string `json:"input"`
	// Explanation is dlroute_explain_json's output; Inputs is
	// dlroute_describe's "inputs", which the page's form is built from.
	Explanation json.RawMessage `json:"explanation"`
	Inputs      json.RawMessage `json:"inputs"`
}

// decideFirst is the first screen's decision with rules, or nil where
// the rules have no jax that compiles and decides seedInput: the page
// then waits for its own engine, as it does for a link to another state.
func decideFirst(rules fs.FS) *firstDecision {
	archive, err := abi.PackText(rules)
	if err != nil {
		return nil
	}
	g := guest.New(guest.Host{}) // a page's host: it reads no device
	if _, status := g.LoadLazy(archive); status != abi.StatusOK {
		return nil
	}
	h, _, status := g.RuleSet("jax")
	if status != abi.StatusOK {
		return nil
	}
	desc, status := g.Describe(h)
	var d struct {
		Ref    string          `json:"ref"`
		Inputs json.RawMessage `json:"inputs"`
	}
	if status != abi.StatusOK || json.Unmarshal(desc, &d) != nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), firstTimeout)
	defer cancel()
	explanation, status := g.ExplainJSON(ctx, h, []byte(seedInput))
	if status != abi.StatusOK {
		return nil
	}
	return &firstDecision{Ref: d.Ref, Input: seedInput, Explanation: explanation, Inputs: d.Inputs}
}
