package wasmserve

import (
	"context"
	"errors"
	"slices"
	"sync"

	"github.com/dlroute/dlroute/cmd/dlroute/internal/serve"
	"github.com/dlroute/dlroute/engine"
	"github.com/dlroute/dlroute/internal/contract"
	"github.com/dlroute/dlroute/wasmhost"
)

// pool is a snapshot's versions in the decision module: each version's
// plan, and instances (wasmhost.Decider, one plan each) idle with a plan
// loaded. A decision takes an idle instance of its version or starts one
// (milliseconds); given back, the instance is kept idle, and past keep
// idle instances in all the least recently used is closed. So a version
// nobody asks for costs no instance (about 6 MB each), a busy one has as
// many as it decides at once, and the pool never holds more than keep
// idle plus one per slot (cmd/dlroute/internal/serve/wasmserve/RATIONALE.md, "Why does serve --engine wasm
// keep few instances, and start the others on demand?"). It is safe for
// concurrent use.
type pool struct {
	m *wasmhost.DecisionModule
	// slots bounds the decisions running at once, shared by every pool
	// of one Prepare.
	slots    chan struct{}
	keep     int
	versions map[string]*version

	mu     sync.Mutex
	idle   []idleDecider // least recently used first
	closed bool
}

type idleDecider struct {
	v *version
	d *wasmhost.Decider
}

// version is one version's plan and its answers.
type version struct {
	ref     string
	plan    []byte
	answers *contract.Answerer
}

func newPool(m *wasmhost.DecisionModule, slots chan struct{}, keep int) *pool {
	return &pool{m: m, slots: slots, keep: keep, versions: map[string]*version{}}
}

// add adds a version; it starts no instance.
func (p *pool) add(ref string, plan []byte) *version {
	v := &version{ref: ref, plan: plan}
	v.answers = contract.NewAnswerer(func(ctx context.Context, line []byte) ([]byte, bool, error) {
		return p.decide(ctx, v, line)
	}, 0)
	p.versions[ref] = v
	return v
}

// Decider returns the decider of rs, a version of the snapshot.
func (p *pool) Decider(_ context.Context, rs *engine.RuleSet) (serve.Decider, error) {
	v, ok := p.versions[rs.Ref()]
	if !ok {
		return nil, &engine.Error{Code: engine.CodeNoRuleSet, Message: "the decision module holds no plan of " + rs.Ref()}
	}
	return v, nil
}

func (v *version) Ref() string { return v.ref }

// ResolveJSON answers from the memo, or decides in an instance: the
// native engine's bytes.
func (v *version) ResolveJSON(ctx context.Context, line []byte) ([]byte, error) {
	return v.answers.Decide(ctx, line)
}

// decide decides line in an instance of v once a slot is free.
func (p *pool) decide(ctx context.Context, v *version, line []byte) ([]byte, bool, error) {
	select {
	case p.slots <- struct{}{}:
	case <-ctx.Done():
		return nil, false, &engine.Error{Code: engine.CodeCanceled, Message: "the decision was canceled: " + context.Cause(ctx).Error()}
	}
	defer func() { <-p.slots }()
	d, err := p.take(ctx, v)
	if err != nil {
		return nil, false, err
	}
	out, err := d.DecideJSON(ctx, line)
	p.put(v, d, err)
	return out, true, err
}

// take returns the most recently used idle instance of v, or starts one.
func (p *pool) take(ctx context.Context, v *version) (*wasmhost.Decider, error) {
	p.mu.Lock()
	for i := len(p.idle) - 1; i >= 0; i-- {
		if p.idle[i].v == v {
			d := p.idle[i].d
			p.idle = slices.Delete(p.idle, i, i+1)
			p.mu.Unlock()
			return d, nil
		}
	}
	p.mu.Unlock()
	return p.m.NewDecider(context.WithoutCancel(ctx), v.plan, "")
}

// put gives an instance back after a decision that returned err. It is
// closed when the module broke (a trap leaves an instance unusable) or
// the pool is closed; else it is kept, and the least recently used idle
// instance is closed past keep.
func (p *pool) put(v *version, d *wasmhost.Decider, err error) {
	var e *engine.Error
	broken := errors.As(err, &e) && (e.Code == wasmhost.CodeModule || e.Code == wasmhost.CodeOutOfMemory)
	p.mu.Lock()
	if broken || p.closed {
		p.mu.Unlock()
		d.Close(context.Background())
		return
	}
	p.idle = append(p.idle, idleDecider{v, d})
	var evicted *wasmhost.Decider
	if len(p.idle) > p.keep {
		evicted = p.idle[0].d
		p.idle = slices.Delete(p.idle, 0, 1)
	}
	p.mu.Unlock()
	if evicted != nil {
		evicted.Close(context.Background())
	}
}

// Close closes every idle instance; one deciding now is closed when it
// is given back. The snapshot closes its engine once no request holds it.
func (p *pool) Close() error {
	p.mu.Lock()
	p.closed = true
	idle := p.idle
	p.idle = nil
	p.mu.Unlock()
	for _, i := range idle {
		i.d.Close(context.Background())
	}
	return nil
}
