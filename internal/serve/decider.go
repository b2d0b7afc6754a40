package serve

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"runtime"
	"strings"

	"github.com/dlroute/dlroute/engine"
	"github.com/dlroute/dlroute/hostfuncs"
	"github.com/dlroute/dlroute/internal/memo"
	"github.com/dlroute/dlroute/live"
)

// Decider decides JSON inputs for one rule-set version, natively or in
// the WebAssembly module: the same bytes either way. *engine.RuleSet is
// one.
type Decider interface {
	Ref() string
	// ResolveJSON returns the decision's JSON, or an *engine.Error whose
	// code says whether the input was at fault.
	ResolveJSON(ctx context.Context, input []byte) ([]byte, error)
}

// Engine is what a live.Gate.Prepare attaches to a snapshot for serve to
// decide with: NativePrepare's, WasmPrepare's, or a caller's own. A
// snapshot with none attached is decided by its rule sets themselves.
type Engine interface {
	io.Closer
	// Decider returns the decider of rs, a version of the snapshot.
	Decider(ctx context.Context, rs *engine.RuleSet) (Decider, error)
}

// deciderFor returns the decider for ref ("jax", "jax@v3", "jax==0.10.2")
// in s, and the warning of a release that no version was checked against
// (refused under strict).
func deciderFor(ctx context.Context, s *live.Snapshot, ref string, strict bool) (Decider, *engine.ReleaseWarning, error) {
	rs, w, err := s.Catalog().Lookup(ref)
	if err != nil {
		return nil, nil, err
	}
	if w != nil && strict {
		return nil, nil, w.Refusal()
	}
	if e, ok := s.Attached().(Engine); ok {
		d, err := e.Decider(ctx, rs)
		return d, w, err
	}
	return rs, w, nil
}

// nativeEngine is what NativePrepare attaches to a snapshot: a memo of
// answers by input bytes for each version.
type nativeEngine struct{ lines map[string]*memo.Memo[[]byte] }

func (*nativeEngine) Close() error { return nil }

func (e *nativeEngine) Decider(_ context.Context, rs *engine.RuleSet) (Decider, error) {
	return remembered{rs, e.lines[rs.Ref()]}, nil
}

// NativePrepare returns a live.Gate.Prepare for the native engine that
// gives each version of the snapshot a memo of answers keyed by the
// input's bytes, of about size entries (0 means engine.DefaultMemoSize).
// A process sees few distinct devices, so most inputs repeat byte for
// byte: a remembered answer skips the JSON decoding, which is most of a
// decision's cost. The memo dies with the snapshot, so a new version
// never answers from an old one's memo.
func NativePrepare(size int) func(context.Context, *live.Snapshot) (io.Closer, error) {
	if size == 0 {
		size = engine.DefaultMemoSize
	}
	return func(_ context.Context, s *live.Snapshot) (io.Closer, error) {
		e := &nativeEngine{lines: map[string]*memo.Memo[[]byte]{}}
		for _, rs := range s.Catalog().RuleSets() {
			e.lines[rs.Ref()] = memo.New[[]byte](size)
		}
		return e, nil
	}
}

// remembered answers from its memo when it can. Only decisions are
// remembered, never errors; the remembered bytes are shared, and answer
// copies them.
type remembered struct {
	*engine.RuleSet
	lines *memo.Memo[[]byte]
}

func (r remembered) ResolveJSON(ctx context.Context, input []byte) ([]byte, error) {
	if out, ok := r.lines.Get(input); ok {
		return out, nil
	}
	out, err := r.RuleSet.ResolveJSON(ctx, input)
	if err == nil {
		r.lines.Put(input, out)
	}
	return out, err
}

// module is a snapshot's rules loaded into a WebAssembly runner of its
// own, so that a swap never reloads a runner under requests in flight.
type module struct{ runner *hostfuncs.Runner }

func (m *module) Close() error { return m.runner.Close(context.Background()) }

func (m *module) Decider(ctx context.Context, rs *engine.RuleSet) (Decider, error) {
	return m.runner.RuleSet(ctx, rs.Ref())
}

// WasmInstances is how many module instances `serve --engine wasm` runs
// at once: one fewer than GOMAXPROCS, and at least one. A guest holds its
// thread until wazero's check at a loop header lets the Go scheduler in,
// which can take tens of milliseconds; with a processor no guest can
// hold, /healthz and /v1/status answer at once even while every instance
// is busy with requests that run to their deadline (RATIONALE.md, "Why
// WithCloseOnContextDone, and what does it cost?").
func WasmInstances() int { return max(1, runtime.GOMAXPROCS(0)-1) }

// WasmPrepare returns a live.Gate.Prepare for `serve --engine wasm`: it
// starts a runner of the compiled module for the snapshot (the module is
// compiled once, so a runner costs an instance), loads its rules, and
// runs every case of every version through the module, so that a
// candidate the module decides differently is refused like one whose
// tests fail natively; then it starts every instance of the pool with the
// rules loaded.
func WasmPrepare(m *hostfuncs.Module) func(context.Context, *live.Snapshot) (io.Closer, error) {
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
