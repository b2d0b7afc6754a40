package live_test

import (
	"context"
	"errors"
	"io"
	"maps"
	"os"
	"path"
	"path/filepath"
	"testing"
	"testing/fstest"
	"time"

	"github.com/dlroute/dlroute/engine"
	"github.com/dlroute/dlroute/internal/testkit/ruletest"
	"github.com/dlroute/dlroute/live"
	"github.com/dlroute/dlroute/rules"
)

// A check has a time budget (Gate.Timeout): past it the candidate is
// refused with CodeCheckTimeout, at the step it had reached, and the
// rules in force stay. A newer change cancels a check under way.

// testBudget is the Gate.Timeout of these tests: ten times what
// ruletest.WithSlowTests takes to compile again from a warm cache under the race
// detector (100 ms), a hundredth of what its tests take natively.
const testBudget = time.Second

// warmCache is an engine.Cache that has compiled ruletest.WithSlowTests, so that its
// compile takes a small part of testBudget.
func warmCache(t *testing.T) *engine.Cache {
	c := engine.NewCache()
	if _, err := engine.Load(ruletest.WithSlowTests(), engine.Options{Cache: c, Root: "rules"}); err != nil {
		t.Fatal(err)
	}
	return c
}

// blockPrepare is a Gate.Prepare that blocks until its context ends, as
// a check that would never end does; started, when set, is told of each
// call, with the revision it prepares.
func blockPrepare(started chan<- string) func(context.Context, *live.Snapshot) (io.Closer, error) {
	return func(ctx context.Context, s *live.Snapshot) (io.Closer, error) {
		if started != nil {
			started <- s.Revision()
		}
		<-ctx.Done()
		return nil, ctx.Err()
	}
}

// deadline is the test's own deadline, less a margin to report in, or a
// minute when the test has none.
func deadline(t *testing.T) <-chan time.Time {
	d, ok := t.Deadline()
	if !ok {
		return time.After(time.Minute)
	}
	return time.After(time.Until(d) * 9 / 10)
}

func TestGateTimeout(t *testing.T) {
	tests := []struct {
		name  string
		gate  live.Gate
		stage live.Stage
	}{
		// The tests run longer than the budget, by far: the deadline
		// stops them.
		{"tests that run for minutes", live.Gate{Timeout: testBudget, Load: engine.Options{Cache: warmCache(t)}}, live.StageTest},
		// Prepare that never returns on its own: the deadline ends it.
		{"a Prepare that does not end", live.Gate{Timeout: testBudget, Prepare: blockPrepare(nil)}, live.StagePrepare},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fsys := ruletest.Rules()
			if tt.stage == live.StageTest {
				fsys = ruletest.WithSlowTests()
			}
			_, err := tt.gate.Admit(context.Background(), &live.Candidate{Origin: "rules", Dir: fsys})
			ref := refusal(t, err)
			var stop *live.StoppedError
			if ref.Code != live.CodeCheckTimeout || ref.Stage != tt.stage || !errors.As(err, &stop) || stop.Budget != testBudget {
				t.Fatalf("Admit: %v (code %s); want %s at %s, naming its budget", err, ref.Code, live.CodeCheckTimeout, tt.stage)
			}
		})
	}
}

// TestTimeoutKeepsRulesInForce: a change whose check would run for
// minutes is refused once the budget passes, and the rules in force
// stay; a candidate refused for time is not checked again while the
// source offers the same bytes.
func TestTimeoutKeepsRulesInForce(t *testing.T) {
	good := ruletest.Rules()
	hang := ruletest.WithMarker(good, "nvhang")
	hangRevision := revisionOf(t, archive(t, hang))
	prepared := make(chan string, 10)
	prepare := func(ctx context.Context, s *live.Snapshot) (io.Closer, error) {
		if s.Revision() != hangRevision {
			return nil, nil
		}
		return blockPrepare(prepared)(ctx, s)
	}
	src := &offerSource{c: &live.Candidate{Origin: "rules", Dir: good}}
	observe, events := observer()
	r, err := live.Open(context.Background(), live.Config{Source: src, Observe: observe, Gate: live.Gate{Timeout: testBudget, Prepare: prepare, Load: engine.Options{Cache: warmCache(t)}}})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	inForce := r.Current()

	src.c = &live.Candidate{Origin: "rules", Dir: ruletest.WithSlowTests()}
	ref := refusal(t, r.Check(context.Background()))
	if ref.Code != live.CodeCheckTimeout || ref.Stage != live.StageTest || r.Current() != inForce {
		t.Fatalf("the slow rules: %v (code %s); in force changed %v; want %s at test, the good rules in force", ref, ref.Code, r.Current() != inForce, live.CodeCheckTimeout)
	}
	if st := r.Status(); st.LastRefusal == nil || st.LastRefusal.Code != live.CodeCheckTimeout || st.Checking != nil || st.Active.Revision != inForce.Revision() {
		t.Errorf("status after the refusal: %+v; want the last refusal %s, no check under way, the good rules active", st, live.CodeCheckTimeout)
	}

	// A Prepare that would never end, twice: prepared once.
	src.c = &live.Candidate{Origin: "rules", Dir: hang}
	first := refusal(t, r.Check(context.Background()))
	again := refusal(t, r.Check(context.Background()))
	e := waitFor(t, events, "the second refusal of the hanging rules", func(e live.Event) bool {
		return e.Outcome == live.Refused && e.Refusal.Revision == hangRevision && e.Repeated
	})
	if first.Code != live.CodeCheckTimeout || first.Stage != live.StagePrepare || again.Reason != first.Reason || e.Refusal.Code != live.CodeCheckTimeout {
		t.Errorf("the hanging rules: %v, then %v; want %s at prepare, twice", first, again, live.CodeCheckTimeout)
	}
	if n := len(prepared); n != 1 || r.Current() != inForce {
		t.Errorf("the hanging rules were prepared %d times, in force changed %v; want once, the good rules in force", n, r.Current() != inForce)
	}
}

// TestNewerChangeCancelsCheck: while a check that would never end runs,
// Status says so, for which revision and since when; a fix written then
// cancels it and is in force without waiting for its budget, here an
// hour. Each change is one file swapped in one step (swapFile), so that
// every check sees either the rules before it or after it, however slow
// the machine.
func TestNewerChangeCancelsCheck(t *testing.T) {
	dir := t.TempDir()
	good := ruletest.Rules()
	if err := ruletest.WriteDir(dir, good); err != nil {
		t.Fatal(err)
	}
	started := make(chan string, 10)
	hang := withMarkerRow(good, "nvhang")
	hangRevision := revisionOf(t, archive(t, hang))
	// Prepare blocks for the revision with the nvhang marker, until its
	// check is canceled; every other passes.
	prepare := func(ctx context.Context, s *live.Snapshot) (io.Closer, error) {
		if s.Revision() != hangRevision {
			return nil, nil
		}
		return blockPrepare(started)(ctx, s)
	}
	observe, events := observer()
	r, err := live.Open(context.Background(), live.Config{Source: live.Dir(dir), Observe: observe, Interval: time.Hour, Settle: 20 * time.Millisecond,
		Gate: live.Gate{Timeout: time.Hour, Prepare: prepare}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	watching := make(chan struct{})
	go func() {
		r.Watch(ctx)
		close(watching)
	}()
	defer func() {
		cancel()
		<-watching
		r.Close()
	}()
	waitFor(t, events, "Watch's first check", func(e live.Event) bool { return e.Outcome == live.Unchanged })

	swapFile(t, dir, markedFile, hang[markedFile].Data)
	select {
	case rev := <-started:
		if rev != hangRevision {
			t.Fatalf("preparing %s, want the nvhang revision %s", rev, hangRevision)
		}
	case <-deadline(t):
		t.Fatal("the nvhang revision's check did not start")
	}
	st := r.Status()
	if c := st.Checking; c == nil || c.Revision != hangRevision || c.Origin != dir || c.Since.IsZero() || !c.Deadline.After(c.Since) {
		t.Fatalf("status while the check runs: checking %+v; want revision %s from %s, since and deadline set", c, hangRevision, dir)
	}

	fix := withMarkerRow(good, "nvfix")
	swapFile(t, dir, markedFile, fix[markedFile].Data)
	waitFor(t, events, "the hung check canceled", func(e live.Event) bool {
		return e.Outcome == live.Canceled && e.Refusal.Revision == hangRevision && e.Refusal.Code == live.CodeCanceled
	})
	s := activated(t, events, "the fix", func(s *live.Snapshot) bool { return decide(t, s, "nvfix 1.0").DeviceType == "kDLCUDA" })
	st = r.Status()
	if r.Current() != s || st.Checking != nil || st.Refusals != 0 || st.LastCheck.Outcome != live.Activated {
		t.Errorf("after the fix: in force is the fix %v, status %+v; want the fix, no check under way, no refusal", r.Current() == s, st)
	}
}

// markedFile is the file that ruletest.WithMarker adds its marker's row
// to.
const markedFile = "jax/v3/rules.yaml"

// withMarkerRow is fsys with marker's row in markedFile, as
// ruletest.WithMarker adds it, but not its test case: a change of one
// file, which swapFile makes in one step.
func withMarkerRow(fsys fstest.MapFS, marker string) fstest.MapFS {
	out := maps.Clone(fsys)
	out[markedFile] = ruletest.WithMarker(fsys, marker)[markedFile]
	return out
}

// swapFile replaces the file name (slash-separated) of the watched folder
// dir in one step, which the watcher sees as one event: the bytes are
// written outside dir, then renamed over the file. A change written in
// place file by file (ruletest.WriteDir) is seen as it goes: a check
// that starts between two files, on a busy machine, sees half the change
// (a case without its rule: refused), and a late event starts a check
// more after the last.
func swapFile(t *testing.T, dir, name string, data []byte) {
	t.Helper()
	staged := filepath.Join(t.TempDir(), path.Base(name))
	if err := os.WriteFile(staged, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(staged, filepath.Join(dir, filepath.FromSlash(name))); err != nil {
		t.Fatal(err)
	}
}

// BenchmarkGateShipped is the check of the shipped rules, which
// DefaultCheckTimeout is sized from: go test -race -run '^$' -bench
// GateShipped ./live.
func BenchmarkGateShipped(b *testing.B) {
	for b.Loop() {
		if _, err := (live.Gate{}).Admit(context.Background(), &live.Candidate{Origin: "rules", Dir: rules.FS}); err != nil {
			b.Fatal(err)
		}
	}
}
