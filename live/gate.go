package live

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/dlroute/dlroute/bundle"
	"github.com/dlroute/dlroute/engine"
)

// Gate is what a candidate must pass to be activated, in order: the
// bundle's checks (every digest; a signature by one of Keys when Keys are
// set), engine.Load of every version and its plan (Plans), the bundle's
// plans.bin when it carries one (exactly BundlePlans of its rules, or
// bundle.CodePlansMismatch at StageCompile), every version's own
// tests.yaml, and Prepare when set. The zero Gate checks digests,
// compiles and tests.
// Rules also puts a candidate in order (see AllowRollback); Admit, which
// knows of no rules in force, does not.
type Gate struct {
	// Keys are the public keys, in the signed-note format
	// (bundle.GenerateKey), of which at least one must have signed a
	// candidate. With Keys set, a rules directory is refused as unsigned.
	Keys []string
	// Load configures engine.Load. An empty Root shows positions under
	// the candidate's Origin.
	Load engine.Options
	// Prepare, when set, is the last step: it readies the snapshot for
	// use, such as loading it into a WebAssembly module and running its
	// tests there, and its error refuses the candidate. What it returns
	// is the snapshot's Attached, closed once the snapshot is retired and
	// released.
	Prepare func(ctx context.Context, s *Snapshot) (io.Closer, error)
	// Now reads the clock, for refusals; nil means time.Now.
	Now func() time.Time
	// AllowRollback lets Rules activate a candidate ordered before the
	// bundle in force, or before the kept bundle at Open: one of a lower
	// bundle.Manifest.Sequence (CodeRollback), or of the same sequence
	// with other content (CodeSequenceReused), which are otherwise
	// refused at StageVerify. The activation's Event carries the
	// RollbackError it let through, for the log.
	AllowRollback bool
	// MaxSequenceJump bounds how far ahead of the bundle in force (or the
	// kept one at Open) a candidate's sequence may be when it is a
	// counter, below MinTimeSequence; 0 means DefaultMaxSequenceJump. A
	// sequence at or above MinTimeSequence is a time in Unix seconds, and
	// is bounded by the clock instead: at most SequenceClockMargin after
	// Now. A candidate beyond either is refused at StageVerify
	// (CodeSequenceAhead), whatever AllowRollback says: accepted, it
	// would put every later bundle before it.
	MaxSequenceJump uint64
	// Timeout bounds how long compiling, testing and preparing one
	// candidate may take; 0 means DefaultCheckTimeout. Past it the
	// check stops, and the candidate is refused at the step it had
	// reached with CodeCheckTimeout: rules that take minutes to test
	// would otherwise hold up every change after them.
	Timeout time.Duration
}

// DefaultCheckTimeout is Gate.Timeout when it is 0: six times the
// slowest check of the shipped rules measured, through the compiler
// module (serve --engine wasm's Prepare before it decided with plans:
// 20 s on a busy 2-core machine; with the decision module 2.2-2.8 s,
// natively 0.8-1.1 s, 4.7 s under the race detector), so that no honest
// rule set comes near it (live/RATIONALE.md, "Why does a check have a budget of two
// minutes?"). It bounds the time a host spends on a candidate that
// nothing replaces; a fix written meanwhile does not wait for it, since
// Watch cancels a check for a newer change.
const DefaultCheckTimeout = 2 * time.Minute

// Admit runs every step of the gate on a candidate and returns the
// snapshot it would activate, or a *Refusal. It activates nothing: it is
// what `dlroute bundle verify` runs, and what Rules runs before a swap.
func (g Gate) Admit(ctx context.Context, c *Candidate) (*Snapshot, error) {
	b, archive, err := g.verify(c)
	if err != nil {
		return nil, err
	}
	return g.build(ctx, c, b, archive)
}

func (g Gate) now() time.Time {
	if g.Now != nil {
		return g.Now()
	}
	return time.Now()
}

// verify reads the candidate as a bundle, packing a directory first.
func (g Gate) verify(c *Candidate) (*bundle.Bundle, []byte, error) {
	archive := c.Archive
	if c.Dir != nil {
		var buf bytes.Buffer
		if _, err := bundle.Build(&buf, c.Dir, bundle.BuildOptions{}); err != nil {
			return nil, nil, refuse(g.now(), StageVerify, c.Origin, "", err)
		}
		archive = buf.Bytes()
	}
	b, err := bundle.Read(archive, bundle.ReadOptions{Keys: g.Keys})
	if err != nil {
		return nil, nil, refuse(g.now(), StageVerify, c.Origin, "", err)
	}
	if ahead := SequenceAhead(b.Manifest.Sequence, 0, g.now(), 0); ahead != nil {
		return nil, nil, refuse(g.now(), StageVerify, c.Origin, b.Manifest.Revision, ahead)
	}
	return b, archive, nil
}

// placed is a bundle that a candidate must not be ordered before: the
// one in force, or the kept one at Open.
type placed struct {
	sequence         uint64
	revision, digest string
	where            string // "in force", "kept in PATH"
}

func placedOf(b *bundle.Bundle, where string) *placed {
	return &placed{sequence: b.Manifest.Sequence, revision: b.Manifest.Revision, digest: b.Digest, where: where}
}

// order returns why b is ordered before one of the bundles, or nil. An
// unordered bundle (sequence 0) puts nothing after it; the same bundle
// again is not a replay.
func order(b *bundle.Bundle, bundles ...*placed) *RollbackError {
	seq := b.Manifest.Sequence
	for _, p := range bundles {
		if p == nil || p.sequence == 0 || p.digest == b.Digest || seq > p.sequence {
			continue
		}
		e := &RollbackError{Code: CodeRollback, Sequence: seq, Newer: p.sequence, NewerRevision: p.revision, NewerWhere: p.where}
		if seq == p.sequence {
			e.Code = CodeSequenceReused
		}
		return e
	}
	return nil
}

func (g Gate) timeout() time.Duration { return cmp.Or(g.Timeout, DefaultCheckTimeout) }

// errBudget is the cause of a check's context once Gate.Timeout passed.
var errBudget = errors.New("the check's time budget ran out")

// build compiles, tests and prepares a verified bundle, within
// Gate.Timeout. engine.Load takes no context: a check whose budget runs
// out while it compiles stops once it has compiled (the load budgets
// bound how long that is), and the tests and Prepare stop with ctx.
func (g Gate) build(ctx context.Context, c *Candidate, b *bundle.Bundle, archive []byte) (*Snapshot, error) {
	ctx, cancel := context.WithTimeoutCause(ctx, g.timeout(), errBudget)
	defer cancel()
	rev := b.Manifest.Revision
	opts := g.Load
	if opts.Root == "" {
		opts.Root = c.Origin
	}
	if stop := g.stopped(ctx, StageCompile); stop != nil {
		return nil, refuse(g.now(), StageCompile, c.Origin, rev, stop)
	}
	if b.Plans() != nil && opts.Cache == nil {
		// The bundle's plans are checked by loading the rules again
		// (BundlePlans): a cache makes that load reuse this one's work.
		opts.Cache = engine.NewCache()
	}
	cat, err := engine.Load(b.FS(), opts)
	var plans map[string][]byte
	if err == nil {
		// Part of compiling: a version no plan can hold is refused here,
		// as lint refuses it, whichever engine decides (Plans).
		plans, err = Plans(cat)
	}
	if err == nil {
		// A bundle's plans.bin must be what its rules build: the
		// decision module decides with the plans alone.
		err = checkBundlePlans(b, opts)
	}
	if stop := g.stopped(ctx, StageCompile); stop != nil {
		err = stop
	}
	if err != nil {
		return nil, refuse(g.now(), StageCompile, c.Origin, rev, err)
	}
	if err := runTests(ctx, cat); err != nil {
		if stop := g.stopped(ctx, StageTest); stop != nil {
			err = stop
		}
		return nil, refuse(g.now(), StageTest, c.Origin, rev, err)
	}
	s := &Snapshot{catalog: cat, plans: plans, bundle: b, archive: archive, origin: c.Origin}
	if g.Prepare != nil {
		attached, err := g.Prepare(ctx, s)
		if stop := g.stopped(ctx, StagePrepare); stop != nil {
			if attached != nil {
				attached.Close()
			}
			err = stop
		}
		if err != nil {
			return nil, refuse(g.now(), StagePrepare, c.Origin, rev, err)
		}
		s.attached = attached
	}
	return s, nil
}

// stopped returns a *StoppedError once ctx has ended, or nil.
func (g Gate) stopped(ctx context.Context, stage Stage) error {
	if ctx.Err() == nil {
		return nil
	}
	cause := context.Cause(ctx)
	if errors.Is(cause, errBudget) {
		return &StoppedError{Code: CodeCheckTimeout, Stage: stage, Budget: g.timeout(), err: cause}
	}
	return &StoppedError{Code: engine.CodeCanceled, Stage: stage, err: cause}
}

// runTests runs every version's cases; the error lists each failure at
// its case's position.
func runTests(ctx context.Context, cat *engine.Catalog) error {
	var failures engine.ErrorList
	for _, rs := range cat.RuleSets() {
		if err := ctx.Err(); err != nil {
			return err // the caller says why: stopped
		}
		for _, r := range rs.Test(ctx) {
			if r.Pass {
				continue
			}
			got := r.Got.String()
			if r.Err != nil {
				got = "error: " + r.Err.Error()
			}
			pos := r.Pos
			failures = append(failures, &engine.Error{Code: engine.CodeTestFailure, Pos: &pos,
				Message: fmt.Sprintf("%s: case %s: got %s, want %s", rs.Ref(), r.Name, got, r.Want)})
		}
	}
	if len(failures) > 0 {
		return failures
	}
	return nil
}
