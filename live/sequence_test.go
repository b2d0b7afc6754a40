package live_test

import (
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/dlroute/dlroute/bundle"
	"github.com/dlroute/dlroute/internal/testkit/ruletest"
	"github.com/dlroute/dlroute/live"
)

// TestSequenceAhead is issue 25's sequence from the future: a validly
// signed bundle of sequence 2^64-1, one of the year 9999 in Unix seconds,
// one a day and a minute ahead of the clock, and a counter that jumps too
// far are each refused at verify with sequence_ahead, even with
// AllowRollback; the bundle in force stays; a normal bundle after them is
// activated.
func TestSequenceAhead(t *testing.T) {
	private, public, _ := bundle.GenerateKey("dlroute-rules")
	now := time.Date(2026, 12, 1, 22, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	year9999 := uint64(time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC).Unix())
	for _, c := range []struct {
		name        string
		inForce     uint64
		seq         uint64
		maxJump     uint64
		ahead       bool
		wantCeiling uint64
	}{
		{"2^64-1", uint64(now.Unix()), math.MaxUint64, 0, true, uint64(now.Add(live.SequenceClockMargin).Unix())},
		{"the year 9999", uint64(now.Unix()), year9999, 0, true, uint64(now.Add(live.SequenceClockMargin).Unix())},
		{"a day and a minute ahead", uint64(now.Unix()), uint64(now.Add(live.SequenceClockMargin + time.Minute).Unix()), 0, true, uint64(now.Add(live.SequenceClockMargin).Unix())},
		{"a day ahead", uint64(now.Unix()), uint64(now.Add(live.SequenceClockMargin).Unix()), 0, false, 0},
		{"a counter past the jump", 5, 5 + live.DefaultMaxSequenceJump + 1, 0, true, 5 + live.DefaultMaxSequenceJump},
		{"a counter within the jump", 5, 5 + live.DefaultMaxSequenceJump, 0, false, 0},
		{"a counter within a larger jump", 5, 5 + live.DefaultMaxSequenceJump + 1, 2 * live.DefaultMaxSequenceJump, false, 0},
		{"2^64-1 after a counter", 5, math.MaxUint64, 0, true, uint64(now.Add(live.SequenceClockMargin).Unix())},
	} {
		t.Run(c.name, func(t *testing.T) {
			gate := live.Gate{Keys: []string{public}, Now: clock, MaxSequenceJump: c.maxJump, AllowRollback: true}
			r, err := live.New(live.Config{Source: live.Static("unused", ruletest.Rules()), Gate: gate, Now: clock})
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			offer := func(origin string, data []byte) error {
				return r.Offer(context.Background(), &live.Candidate{Origin: origin, Archive: data})
			}
			if err := offer("in force", sequenced(t, ruletest.Rules(), c.inForce, private)); err != nil {
				t.Fatalf("Offer(in force): %v", err)
			}
			err = offer(c.name, sequenced(t, ruletest.WithMarker(ruletest.Rules(), "nvfork"), c.seq, private))
			if !c.ahead {
				if err != nil {
					t.Fatalf("Offer(%d after %d) = %v; want it activated", c.seq, c.inForce, err)
				}
				return
			}
			ref := refusal(t, err)
			var ahead *live.AheadError
			if ref.Stage != live.StageVerify || ref.Code != live.CodeSequenceAhead || !errors.As(ref, &ahead) || ahead.Ceiling != c.wantCeiling {
				t.Fatalf("Offer(%d after %d) = %v (stage %s, code %s); want %s at verify, ceiling %d", c.seq, c.inForce, ref, ref.Stage, ref.Code, live.CodeSequenceAhead, c.wantCeiling)
			}
			if got := r.Current().Sequence(); got != c.inForce {
				t.Fatalf("after the refusal, sequence %d is in force; want %d", got, c.inForce)
			}
			next := c.inForce + 60
			if err := offer("next", sequenced(t, ruletest.WithMarker(ruletest.Rules(), "otherfork"), next, private)); err != nil || r.Current().Sequence() != next {
				t.Fatalf("a normal bundle after it: %v, sequence %d in force; want %d activated", err, r.Current().Sequence(), next)
			}
		})
	}
}

// TestKeptFromTheFutureDoesNotPin: a kept bundle of sequence 2^64-1
// (kept by a host from before the ceiling) neither orders the source's
// bundle after it at Open nor is served: the source's normal bundle is
// activated and replaces the kept file, with no flag and no file deleted.
func TestKeptFromTheFutureDoesNotPin(t *testing.T) {
	private, public, _ := bundle.GenerateKey("dlroute-rules")
	now := time.Now()
	dir := t.TempDir()
	keepPath, srcPath := filepath.Join(dir, "kept.tar.gz"), filepath.Join(dir, "rules.tar.gz")
	os.WriteFile(keepPath, sequenced(t, ruletest.Rules(), math.MaxUint64, private), 0o600)
	normal := uint64(now.Unix())
	os.WriteFile(srcPath, sequenced(t, ruletest.WithMarker(ruletest.Rules(), "nvfork"), normal, private), 0o644)
	r, err := live.Open(context.Background(), live.Config{Source: live.File(srcPath), Keep: keepPath, Gate: live.Gate{Keys: []string{public}}})
	if err != nil {
		t.Fatalf("Open with a kept bundle from the future: %v", err)
	}
	defer r.Close()
	if s := r.Current(); s.Kept() || s.Sequence() != normal {
		t.Fatalf("Open: sequence %d in force (kept %v); want the source's %d", s.Sequence(), s.Kept(), normal)
	}
	kept, err := bundle.ReadFile(keepPath, bundle.ReadOptions{})
	if err != nil || kept.Manifest.Sequence != normal {
		t.Fatalf("the kept file after Open: %v, %v; want the source's bundle, sequence %d", kept, err, normal)
	}

	// With no source, the kept bundle from the future is refused, not served.
	os.WriteFile(keepPath, sequenced(t, ruletest.Rules(), math.MaxUint64, private), 0o600)
	os.Remove(srcPath)
	_, err = live.Open(context.Background(), live.Config{Source: live.File(srcPath), Keep: keepPath, Gate: live.Gate{Keys: []string{public}}})
	var ahead *live.AheadError
	if !errors.As(err, &ahead) {
		t.Fatalf("Open with only a kept bundle from the future: %v; want it refused as %s", err, live.CodeSequenceAhead)
	}
}
