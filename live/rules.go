package live

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dlroute/dlroute/bundle"
	"github.com/dlroute/dlroute/engine"
	"github.com/dlroute/dlroute/internal/fsutil/atomicfile"
)

// Config configures Open. Only Source is required.
type Config struct {
	// Source offers candidates: Dir, File, HTTP or Static.
	Source Source
	// Gate is what a candidate must pass. Without a Gate.Load.Cache,
	// the rules keep an engine.Cache of their own, so a candidate that
	// changes one file of the last compiles only that file's expressions.
	Gate Gate
	// Keep is the file the last activated bundle is written to, and read
	// from at Open when the source has nothing that passes the gate; ""
	// keeps nothing.
	Keep string
	// Interval is how often Watch checks the source; 0 means
	// DefaultInterval. After a fetch fails, the wait doubles for each
	// failure in a row, up to MaxBackoff.
	Interval time.Duration
	// MaxBackoff bounds the wait after failed fetches; 0 means
	// DefaultMaxBackoff.
	MaxBackoff time.Duration
	// Settle is how long Watch waits after a Watcher's change for the
	// changes to stop (an editor writes a file in steps) before it checks;
	// 0 means DefaultSettle.
	Settle time.Duration
	// Observe, when set, is called with every event, one at a time, in
	// order.
	Observe func(Event)
	// Now reads the clock; nil means time.Now.
	Now func() time.Time
}

// Defaults of Config.
const (
	DefaultInterval   = 30 * time.Second
	DefaultMaxBackoff = 5 * time.Minute
	DefaultSettle     = 200 * time.Millisecond
)

// Rules is the rules in force, kept live: a snapshot that a source's next
// candidate replaces, by an atomic swap, only after it passes the gate.
// A refused candidate changes nothing but the status. It is safe for
// concurrent use: Current and Acquire never wait for a check.
type Rules struct {
	cfg    Config
	active atomic.Pointer[Snapshot]
	mu     sync.Mutex // one check or offer at a time
	// kept is the kept bundle as Open found it, until an activation
	// replaces it: a candidate is not ordered before it either. r.mu.
	kept *placed
	// refused is the last candidate refused for its content (at compile
	// or test) or for time, by digest: the same bytes again are refused
	// with it, unchecked. r.mu.
	refused *Refusal
	// refusedDigest is refused's bundle digest. r.mu.
	refusedDigest string

	statusMu sync.Mutex
	status   Status
}

// Open makes the rules live: it checks the source once, and when that
// gives nothing to serve (the source is unreachable, or its candidate is
// refused) it restores the bundle kept in Config.Keep, which passes the
// same gate. A source's candidate ordered before the kept bundle is
// refused (CodeRollback), as one ordered before the rules in force is
// later, unless Gate.AllowRollback. Open fails only when neither gives a
// snapshot; the error then joins the source's *Refusal and the kept
// bundle's. It first removes the temporary files that a host killed while
// keeping a bundle left beside Config.Keep (atomicfile.RemoveStale). Open
// does not watch the source: call Watch.
func Open(ctx context.Context, cfg Config) (*Rules, error) {
	r, err := New(cfg)
	if err != nil {
		return nil, err
	}
	if cfg.Keep != "" {
		atomicfile.RemoveStale(cfg.Keep, r.cfg.Now()) // best effort: a leftover costs only disk
		r.kept = r.placeKept()
	}
	srcErr := r.Check(ctx)
	if r.active.Load() != nil {
		return r, nil
	}
	if srcErr == nil {
		srcErr = errors.New("the source had nothing to offer")
	}
	if _, err := os.Stat(cfg.Keep); cfg.Keep == "" || errors.Is(err, fs.ErrNotExist) {
		return nil, srcErr // nothing was kept: a first start
	}
	keptErr := r.restore(ctx)
	if keptErr != nil {
		return nil, errors.Join(srcErr, keptErr)
	}
	return r, nil
}

// New returns rules with nothing in force: Current and Acquire return nil
// until Check, Offer or Watch activates a candidate. It checks nothing
// and restores nothing: a host that can serve before any rules pass (an
// editor showing why they do not) uses it where a server uses Open.
func New(cfg Config) (*Rules, error) {
	if cfg.Source == nil {
		return nil, errors.New("live: Config.Source is nil")
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Gate.Now == nil {
		cfg.Gate.Now = cfg.Now
	}
	if cfg.Gate.Load.Cache == nil {
		cfg.Gate.Load.Cache = engine.NewCache()
	}
	r := &Rules{cfg: cfg}
	r.status = Status{Source: cfg.Source.String(), Kept: cfg.Keep, Started: cfg.Now()}
	return r, nil
}

// placeKept returns the kept bundle's place in the order, or nil when
// there is none that passes the gate's checks of the bytes and the
// signature: an unsigned file in the cache puts nothing after it.
func (r *Rules) placeKept() *placed {
	data, err := readLimited(r.cfg.Keep, bundle.MaxArchiveSize)
	if err != nil {
		return nil
	}
	b, _, err := r.cfg.Gate.verify(&Candidate{Origin: r.cfg.Keep, Archive: data})
	if err != nil {
		return nil
	}
	return placedOf(b, "kept in "+r.cfg.Keep)
}

// restore offers the kept bundle.
func (r *Rules) restore(ctx context.Context) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	start := r.cfg.Now()
	data, err := readLimited(r.cfg.Keep, bundle.MaxArchiveSize)
	if err != nil {
		ref := refuse(start, StageFetch, r.cfg.Keep, "", err)
		r.record(Event{At: start, Outcome: Refused, Refusal: ref, Took: r.cfg.Now().Sub(start)})
		return ref
	}
	var keptAt time.Time
	if st, err := os.Stat(r.cfg.Keep); err == nil {
		keptAt = st.ModTime()
	}
	return r.offer(ctx, &Candidate{Origin: r.cfg.Keep, Archive: data}, start, true, keptAt)
}

// Current returns the snapshot in force. Its catalog stays usable after
// it is replaced; to use its Attached, Acquire it instead.
func (r *Rules) Current() *Snapshot { return r.active.Load() }

// Acquire returns the snapshot in force, held until its Release: its
// Attached is not closed before then, even if it is replaced. A request
// that acquires once and uses one snapshot throughout is answered by one
// version of the rules.
func (r *Rules) Acquire() *Snapshot {
	for {
		s := r.active.Load()
		if s == nil || s.hold() {
			return s
		}
		// Replaced between the load and the hold: the new one is in place.
	}
}

// Check fetches the source once and offers what it gives. It returns nil
// when a candidate was activated or nothing changed, and the *Refusal
// otherwise; the rules in force stay in force.
func (r *Rules) Check(ctx context.Context) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	start := r.cfg.Now()
	r.checking(&Checking{Origin: r.cfg.Source.String(), Since: start})
	c, err := r.cfg.Source.Fetch(ctx)
	if errors.Is(err, ErrNotModified) {
		r.record(Event{At: start, Outcome: Unchanged, Took: r.cfg.Now().Sub(start)})
		return nil
	}
	if err != nil {
		ref := refuse(start, StageFetch, r.cfg.Source.String(), "", err)
		r.record(Event{At: start, Outcome: Refused, Refusal: ref, Took: r.cfg.Now().Sub(start)})
		return ref
	}
	return r.offer(ctx, c, start, false, time.Time{})
}

// Offer puts a candidate from elsewhere through the gate and activates it,
// as Check does with the source's: an editor that holds rules in memory
// offers them here. It returns nil or the *Refusal.
func (r *Rules) Offer(ctx context.Context, c *Candidate) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.offer(ctx, c, r.cfg.Now(), false, time.Time{})
}

// offer gates a candidate and swaps it in; r.mu is held. kept says the
// candidate is the kept bundle, written at keptAt.
func (r *Rules) offer(ctx context.Context, c *Candidate, start time.Time, kept bool, keptAt time.Time) error {
	g := r.cfg.Gate
	r.checking(&Checking{Origin: c.Origin, Since: start})
	b, archive, err := g.verify(c)
	active := r.active.Load()
	if err == nil && active != nil && active.Digest() == b.Digest {
		r.record(Event{At: start, Outcome: Unchanged, Snapshot: active, Took: r.cfg.Now().Sub(start)})
		return nil
	}
	var rollback *RollbackError
	if err == nil {
		var inForce *placed
		if active != nil {
			inForce = placedOf(active.bundle, "in force")
		}
		if ahead := jumped(b, g.MaxSequenceJump, inForce, r.kept); ahead != nil {
			err = refuse(g.now(), StageVerify, c.Origin, b.Manifest.Revision, ahead)
		} else if rollback = order(b, inForce, r.kept); rollback != nil && !g.AllowRollback {
			err = refuse(g.now(), StageVerify, c.Origin, b.Manifest.Revision, rollback)
		}
	}
	var s *Snapshot
	switch {
	case err != nil:
	case b.Digest == r.refusedDigest:
		again := *r.refused
		again.At = g.now()
		err = &again
	default:
		r.checking(&Checking{Origin: c.Origin, Revision: b.Manifest.Revision, Since: start, Deadline: g.now().Add(g.timeout())})
		s, err = g.build(ctx, c, b, archive)
		if ref, ok := err.(*Refusal); ok && verdictOfContent(ref) {
			r.refused, r.refusedDigest = ref, b.Digest
		}
	}
	if err != nil {
		ref := err.(*Refusal)
		outcome := Refused
		var stop *StoppedError
		if errors.As(ref, &stop) && stop.Code == CodeCanceled {
			outcome = Canceled
		}
		r.record(Event{At: start, Outcome: outcome, Refusal: ref, Took: r.cfg.Now().Sub(start)})
		return ref
	}
	s.kept, s.keptAt = kept, keptAt
	s.activated = r.cfg.Now()
	if old := r.active.Swap(s); old != nil {
		old.retire()
	}
	r.kept = nil // the rules in force are now what a candidate is put after
	var keepErr error
	if r.cfg.Keep != "" && !kept {
		keepErr = keep(r.cfg.Keep, archive)
	}
	r.record(Event{At: start, Outcome: Activated, Snapshot: s, Took: r.cfg.Now().Sub(start), KeepError: keepErr, Rollback: rollback})
	return nil
}

// verdictOfContent reports whether a refusal would come again for the
// same bytes, and at the same cost: rules that do not compile or pass
// their tests, or whose check ran out of time. A candidate refused so
// is not checked again until its bytes change (live/RATIONALE.md, "Why is a
// candidate refused for time not checked again?").
func verdictOfContent(ref *Refusal) bool {
	return ref.Code == CodeCheckTimeout || ref.Code != CodeCanceled && (ref.Stage == StageCompile || ref.Stage == StageTest)
}

// checking sets the status's check under way.
func (r *Rules) checking(c *Checking) {
	r.statusMu.Lock()
	r.status.Checking = c
	r.statusMu.Unlock()
}

// record updates the status and tells the observer. An outcome ends the
// check under way.
func (r *Rules) record(e Event) {
	r.statusMu.Lock()
	st := &r.status
	if e.Outcome == Refused {
		e.Repeated = st.LastCheck != nil && st.LastCheck.Outcome == Refused && st.LastRefusal.same(e.Refusal)
	}
	if e.Outcome != "" {
		st.LastCheck = &Check{At: e.At, Outcome: e.Outcome, Seconds: e.Took.Seconds()}
		st.Checking = nil
	}
	switch e.Outcome {
	case Activated:
		st.Activations++
		st.KeepError = ""
		if e.KeepError != nil {
			st.KeepError = e.KeepError.Error()
		}
	case Refused:
		st.Refusals++
		st.LastRefusal = e.Refusal
	}
	r.statusMu.Unlock()
	if r.cfg.Observe != nil {
		r.cfg.Observe(e)
	}
}

// Status returns the rules' status now.
func (r *Rules) Status() Status {
	r.statusMu.Lock()
	defer r.statusMu.Unlock()
	st := r.status
	st.Active = activeOf(r.active.Load())
	return st
}

// Close retires the snapshot in force, so that its Attached is closed
// once released; Current and Acquire return nil after. Call it once the
// rules are no longer used.
func (r *Rules) Close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if s := r.active.Swap(nil); s != nil {
		s.retire()
	}
	return nil
}
