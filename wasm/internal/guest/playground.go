package guest

import (
	"context"
	"encoding/json"
	"errors"
	"maps"

	"github.com/dlroute/dlroute/engine"
	"github.com/dlroute/dlroute/internal/contract"
)

// What the browser playground asks of the module besides decisions: run a
// version's tests where the person edits it, compare the edited rules with
// the rules as served, and let go of the rule sets of edits that were
// replaced, since every edit is a new load and a new handle.

// TestReport is what dlroute_test returns: every case of a version, run
// as `dlroute test` runs it, with what it got.
type TestReport struct {
	Ref    string       `json:"ref"`
	Passed int          `json:"passed"`
	Failed int          `json:"failed"`
	Cases  []CaseReport `json:"cases"`
}

// CaseReport is one case: its input, what it wants, and what it got, a
// decision or the error that kept the rules from deciding.
type CaseReport struct {
	Name     string           `json:"name"`
	Position engine.Position  `json:"position"`
	Input    engine.Input     `json:"input"`
	Want     engine.Want      `json:"want"`
	Got      *engine.Decision `json:"got,omitempty"`
	Error    *engine.Error    `json:"error,omitempty"`
	Pass     bool             `json:"pass"`
}

// Test runs every case of a handle's version and returns a TestReport as
// JSON. A failing case is a result, not an error: the status is ok. A
// version LoadLazy compiled without its tests is compiled with them here
// the first time, from the same rules, and an error in them is
// load_error.
func (g *Guest) Test(ctx context.Context, h uint32) ([]byte, contract.Status) {
	hd, ok := g.handle(h)
	if !ok {
		return nil, contract.StatusBadHandle
	}
	rs := hd.rs
	if hd.lazy != nil && len(rs.Cases()) == 0 {
		if hd.tested == nil {
			cat, err := engine.Load(hd.lazy, engine.Options{Select: []string{rs.Ref()}, Cache: g.cache, TrustParsed: true})
			if err != nil {
				return errorsJSON(loadErrors(err)), contract.StatusLoadError
			}
			hd.tested, _ = cat.RuleSet(rs.Ref())
		}
		rs = hd.tested
	}
	report := TestReport{Ref: rs.Ref(), Cases: []CaseReport{}}
	for _, r := range rs.Test(ctx) {
		c := CaseReport{Name: r.Name, Position: r.Pos, Input: r.Input, Want: r.Want, Pass: r.Pass}
		if r.Err != nil {
			c.Error = asError(r.Err)
		} else {
			got := r.Got
			c.Got = &got
		}
		if c.Pass {
			report.Passed++
		} else {
			report.Failed++
		}
		report.Cases = append(report.Cases, c)
	}
	data, err := json.Marshal(report)
	if err != nil {
		return contract.ErrorJSON(err), contract.StatusEvalError
	}
	return data, contract.StatusOK
}

// MaxDiffInputs bounds the inputs Diff tries. In a browser a decision in
// the module costs tens of microseconds, and Diff makes two an input on
// the page's one thread: 20,000 inputs is about a second.
const MaxDiffInputs = 20_000

// Diff compares two handles' rule sets as `dlroute diff` does
// (engine.Diff): every input of the domain derived from their rules, and
// the inputs they decide differently, grouped. The output is the
// engine.DiffReport as JSON; a domain over MaxDiffInputs is an eval_error
// with code domain_too_large.
func (g *Guest) Diff(ctx context.Context, a, b uint32) ([]byte, contract.Status) {
	ha, okA := g.handle(a)
	hb, okB := g.handle(b)
	if !okA || !okB {
		return nil, contract.StatusBadHandle
	}
	report, err := engine.Diff(ctx, ha.rs, hb.rs, engine.DiffOptions{MaxInputs: MaxDiffInputs})
	if err != nil {
		return contract.ErrorJSON(err), contract.StatusEvalError
	}
	data, err := json.Marshal(report)
	if err != nil {
		return contract.ErrorJSON(err), contract.StatusEvalError
	}
	return data, contract.StatusOK
}

// Release lets go of a handle: later calls with it get bad_handle, and
// its rule set is freed once no catalog holds it. Handles are never
// reused. Releasing a handle that is not held does nothing.
func (g *Guest) Release(h uint32) {
	if _, ok := g.handle(h); ok {
		g.handles[h-1] = nil
		maps.DeleteFunc(g.byRef, func(_ string, v uint32) bool { return v == h })
	}
}

func asError(err error) *engine.Error {
	var e *engine.Error
	if !errors.As(err, &e) {
		e = &engine.Error{Code: engine.CodeEval, Message: err.Error()}
	}
	return e
}
