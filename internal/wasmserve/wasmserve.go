// Package wasmserve is `dlroute serve --engine wasm`: the engine that
// decides serve's requests in the WebAssembly module, run by wazero. It
// is apart from internal/serve, which takes an engine and imports no
// implementation of one, so that serve's handler, its tests and the
// playground build no module; cmd/dlroute gives it to serve.
package wasmserve

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"runtime"
	"strings"

	"github.com/dlroute/dlroute/engine"
	"github.com/dlroute/dlroute/internal/serve"
	"github.com/dlroute/dlroute/live"
	"github.com/dlroute/dlroute/wasmhost"
)

// module is a snapshot's rules loaded into a WebAssembly runner of its
// own, so that a swap never reloads a runner under requests in flight.
type module struct{ runner *wasmhost.Runner }

func (m *module) Close() error { return m.runner.Close(context.Background()) }

func (m *module) Decider(ctx context.Context, rs *engine.RuleSet) (serve.Decider, error) {
	return m.runner.RuleSet(ctx, rs.Ref())
}

// Instances is how many module instances `serve --engine wasm` runs
// at once: one fewer than GOMAXPROCS, and at least one. A guest holds its
// thread until wazero's check at a loop header lets the Go scheduler in,
// which can take tens of milliseconds; with a processor no guest can
// hold, /healthz and /v1/status answer at once even while every instance
// is busy with requests that run to their deadline (RATIONALE.md, "Why
// WithCloseOnContextDone, and what does it cost?").
func Instances() int { return max(1, runtime.GOMAXPROCS(0)-1) }

// Prepare returns a live.Gate.Prepare for `serve --engine wasm`: it
// starts a runner of the compiled module for the snapshot (the module is
// compiled once, so a runner costs an instance), loads its rules, and
// runs every case of every version through the module, so that a
// candidate the module decides differently is refused like one whose
// tests fail natively; then it starts every instance of the pool with the
// rules loaded.
func Prepare(m *wasmhost.Module) func(context.Context, *live.Snapshot) (io.Closer, error) {
	return func(ctx context.Context, s *live.Snapshot) (io.Closer, error) {
		runner, err := m.NewRunner(ctx)
		if err != nil {
			return nil, err
		}
		m := &module{runner}
		err = m.test(ctx, s)
		if err == nil {
			// Every instance loads the rules now, off the request path,
			// so the first requests after the swap do not wait for it.
			err = runner.Prewarm(ctx)
		}
		if err != nil {
			m.Close()
			return nil, err
		}
		return m, nil
	}
}

// test runs every case through the module's JSON entry, the one serve
// answers with.
func (m *module) test(ctx context.Context, s *live.Snapshot) error {
	if err := m.runner.Load(ctx, s.FS()); err != nil {
		return err
	}
	var failures []string
	for _, rs := range s.Catalog().RuleSets() {
		wrs, err := m.runner.RuleSet(ctx, rs.Ref())
		if err != nil {
			return err
		}
		for _, c := range rs.Cases() {
			var got engine.Decision
			input, err := json.Marshal(c.Input)
			if err == nil {
				var out []byte
				if out, err = wrs.ResolveJSON(ctx, input); err == nil {
					err = got.UnmarshalJSON(out)
				}
			}
			if err != nil || !c.Want.Matches(got) {
				failures = append(failures, fmt.Sprintf("%s: case %s: the module got %v (%v), want %s", c.Pos, c.Name, got, err, c.Want))
			}
		}
	}
	if len(failures) > 0 {
		return &engine.Error{Code: engine.CodeTestFailure, Message: strings.Join(failures, "\n")}
	}
	return nil
}
