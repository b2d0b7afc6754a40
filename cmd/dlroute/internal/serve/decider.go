package serve

import (
	"context"
	"io"

	"github.com/dlroute/dlroute/engine"
	"github.com/dlroute/dlroute/internal/contract"
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
// decide with: NativePrepare's, the WebAssembly engine's (cmd/dlroute
// gives cmd/dlroute/internal/serve/wasmserve's), or a caller's own. A
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

// nativeEngine is what NativePrepare attaches to a snapshot: the
// answerer of each version, which remembers its answers by input bytes.
type nativeEngine struct{ answers map[string]*contract.Answerer }

func (*nativeEngine) Close() error { return nil }

func (e *nativeEngine) Decider(_ context.Context, rs *engine.RuleSet) (Decider, error) {
	return remembered{rs, e.answers[rs.Ref()]}, nil
}

// NativePrepare returns a live.Gate.Prepare for the native engine that
// gives each version of the snapshot an answerer that remembers about
// size answers by the input's bytes (0 means engine.DefaultMemoSize).
// The memo dies with the snapshot, so a new version never answers from
// an old one's memo.
func NativePrepare(size int) func(context.Context, *live.Snapshot) (io.Closer, error) {
	return func(_ context.Context, s *live.Snapshot) (io.Closer, error) {
		e := &nativeEngine{answers: map[string]*contract.Answerer{}}
		for _, rs := range s.Catalog().RuleSets() {
			e.answers[rs.Ref()] = contract.NativeAnswerer(rs, size)
		}
		return e, nil
	}
}

// remembered answers through its answerer, which decides with the rule
// set and remembers decisions, never errors; the remembered bytes are
// shared, and answer copies them.
type remembered struct {
	*engine.RuleSet
	answer *contract.Answerer
}

func (r remembered) ResolveJSON(ctx context.Context, input []byte) ([]byte, error) {
	return r.answer.Decide(ctx, input)
}
