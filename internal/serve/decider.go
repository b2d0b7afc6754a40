package serve

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/dlroute/dlroute/engine"
	"github.com/dlroute/dlroute/hostfuncs"
	"github.com/dlroute/dlroute/live"
)

// decider decides JSON inputs for one rule-set version, natively or in
// the WebAssembly module: the same bytes either way.
type decider interface {
	Ref() string
	// ResolveJSON returns the decision's JSON, or an *engine.Error whose
	// code says whether the input was at fault.
	ResolveJSON(ctx context.Context, input []byte) ([]byte, error)
}

// deciderFor returns the decider for ref ("jax", "jax@v3") in s: the
// module's when s was prepared by WasmPrepare, the native engine's
// otherwise.
func deciderFor(ctx context.Context, s *live.Snapshot, ref string) (decider, error) {
	rs, err := s.Catalog().RuleSet(ref)
	if err != nil {
		return nil, err
	}
	if m, ok := s.Attached().(*module); ok {
		return m.runner.RuleSet(ctx, rs.Ref())
	}
	return native{rs}, nil
}

// native is an engine.RuleSet as a decider.
type native struct{ *engine.RuleSet }

func (n native) ResolveJSON(ctx context.Context, input []byte) ([]byte, error) {
	in, err := n.DecodeInput(input)
	if err != nil {
		return nil, err
	}
	d, err := n.Resolve(ctx, in)
	if err != nil {
		return nil, err
	}
	return d.MarshalJSON()
}

// module is a snapshot's rules loaded into a WebAssembly runner of its
// own, so that a swap never reloads a runner under requests in flight.
type module struct{ runner *hostfuncs.Runner }

func (m *module) Close() error { return m.runner.Close(context.Background()) }

// WasmPrepare returns a live.Gate.Prepare for `serve --engine wasm`: it
// starts a runner of the module for the snapshot, loads its rules, and
// runs every case of every version through the module, so that a
// candidate the module decides differently is refused like one whose
// tests fail natively.
func WasmPrepare(cfg hostfuncs.RunnerConfig) func(context.Context, *live.Snapshot) (io.Closer, error) {
	return func(ctx context.Context, s *live.Snapshot) (io.Closer, error) {
		runner, err := hostfuncs.NewRunner(ctx, cfg)
		if err != nil {
			return nil, err
		}
		m := &module{runner}
		if err := m.test(ctx, s); err != nil {
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
