// Package wasmserve is `dlroute serve --engine wasm`: the engine that
// decides serve's requests in the decision module (wasm/decision: package
// plan alone, run by wazero). It is apart from cmd/dlroute/internal/serve, which
// takes an engine and imports no implementation of one, so that serve's
// handler, its tests and the playground build no module; cmd/dlroute
// gives it to serve.
//
// The gate compiles each version with cel-go and builds its plan
// (live.Plans, Snapshot.Plan); this engine loads the plans into instances
// of the decision module, runs every case of tests.yaml through them, and
// answers requests from them. No CEL compiler runs in WebAssembly.
//
// A line that leaves platform_version out is checked as it is
// (missing_field where the rules require it), as natively: serve reads
// no device for a request, and neither did its compiler-module host,
// which gave the guest no wasmhost.Host.PlatformVersion.
package wasmserve

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"runtime"

	"github.com/dlroute/dlroute/engine"
	"github.com/dlroute/dlroute/live"
	"github.com/dlroute/dlroute/wasmhost"
)

// Instances is how many decisions `serve --engine wasm` runs at once,
// in all versions: one fewer than GOMAXPROCS, and at least one. A guest
// holds its thread until its call returns (the decision module runs
// without wazero's interruption; its step limit bounds a call); with a
// processor no guest can hold, /healthz and /v1/status answer at once
// even while every instance is busy.
func Instances() int { return max(1, runtime.GOMAXPROCS(0)-1) }

// Prepare returns a live.Gate.Prepare for `serve --engine wasm`: it
// loads each version's plan (the one the gate built) into an instance
// of the decision module m and runs the version's cases through it, so
// that a candidate the module decides differently is refused like one
// whose tests fail natively, and returns the engine serve answers with.
// The instances are kept for requests up to the pool's keep (the default
// version of each rule set, the bare name's, is tested last, so its
// instance is among those kept). The snapshots it prepares share one
// budget of Instances() decisions at once, so that a swap's tests and
// the requests in flight on the old snapshot run no more guests between
// them than one snapshot would.
func Prepare(m *wasmhost.DecisionModule) func(context.Context, *live.Snapshot) (io.Closer, error) {
	slots := make(chan struct{}, Instances())
	return func(ctx context.Context, s *live.Snapshot) (io.Closer, error) {
		versions := byDefaultLast(s.Catalog())
		e := newPool(m, slots, keepFor(s.Catalog()))
		for _, rs := range versions {
			plan := s.Plan(rs.Ref())
			if plan == nil { // a snapshot no gate built plans for
				var err error
				if plan, err = rs.Plan(); err != nil {
					e.Close()
					return nil, err
				}
			}
			e.add(rs.Ref(), plan)
		}
		if err := e.test(ctx, versions); err != nil {
			e.Close()
			return nil, err
		}
		return e, nil
	}
}

// keepFor is how many idle instances `serve --engine wasm` keeps for a
// snapshot of cat: one for the default version of each rule set, and
// Instances() - 1 more, so that the busiest version can run a decision
// in every slot without starting an instance for each. An instance is
// about 6 MB (BENCHMARKS.md, "serve --engine wasm on the decision
// module"); a version without one starts one in milliseconds.
func keepFor(cat *engine.Catalog) int {
	names := map[string]bool{}
	for _, rs := range cat.RuleSets() {
		names[rs.Name()] = true
	}
	return len(names) + Instances() - 1
}

// byDefaultLast is cat's versions, each rule set's default version (its
// newest, what a bare name resolves to) after the others.
func byDefaultLast(cat *engine.Catalog) []*engine.RuleSet {
	var others, defaults []*engine.RuleSet
	for _, rs := range cat.RuleSets() {
		if newest, err := cat.RuleSet(rs.Name()); err == nil && newest == rs {
			defaults = append(defaults, rs)
		} else {
			others = append(others, rs)
		}
	}
	return append(others, defaults...)
}

// test runs every case through the module's JSON entry, the one serve
// answers with; the error lists each case it decided otherwise, at the
// case's position.
func (e *pool) test(ctx context.Context, versions []*engine.RuleSet) error {
	var failures engine.ErrorList
	for _, rs := range versions {
		v := e.versions[rs.Ref()]
		for _, c := range rs.Cases() {
			var got engine.Decision
			input, err := json.Marshal(c.Input)
			if err == nil {
				var out []byte
				if out, _, err = e.decide(ctx, v, input); err == nil {
					err = got.UnmarshalJSON(out)
				}
			}
			if err != nil && ctx.Err() != nil {
				return err // canceled, or out of the gate's budget: the gate says which
			}
			if err != nil || !c.Want.Matches(got) {
				gotText := got.String()
				if err != nil {
					gotText = "error: " + err.Error()
				}
				pos := c.Pos
				failures = append(failures, &engine.Error{Code: engine.CodeTestFailure, Pos: &pos,
					Message: fmt.Sprintf("%s: case %s: the decision module got %s, want %s", rs.Ref(), c.Name, gotText, c.Want)})
			}
		}
	}
	if len(failures) > 0 {
		return failures
	}
	return nil
}
