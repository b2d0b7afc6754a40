package live_test

import (
	"context"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/dlroute/dlroute/internal/testkit/ruletest"
	"github.com/dlroute/dlroute/live"
)

// attachment records whether its snapshot's Attached was closed, and how
// often.
type attachment struct {
	revision string
	closes   atomic.Int32
}

func (a *attachment) Close() error {
	a.closes.Add(1)
	return nil
}

// TestSwapUnderLoad swaps versions while goroutines decide: each decision
// comes whole from one snapshot, no held snapshot's attachment is closed
// under it, and every replaced one is closed exactly once. Run it with
// -race.
func TestSwapUnderLoad(t *testing.T) {
	var mu sync.Mutex
	var attached []*attachment
	prepare := func(_ context.Context, s *live.Snapshot) (io.Closer, error) {
		a := &attachment{revision: s.Revision()}
		mu.Lock()
		attached = append(attached, a)
		mu.Unlock()
		return a, nil
	}
	r := openStatic(t, ruletest.Rules(), live.Config{Gate: live.Gate{Prepare: prepare}})

	const swaps = 6
	// Each version adds its own marker, forka, forkb...: no marker is a
	// substring of another's platform version.
	marker := func(i int) string { return fmt.Sprintf("fork%c", 'a'+i) }
	versions := make([][]byte, swaps)
	markerOf := map[string]string{r.Current().Revision(): ""} // by revision
	for i := range versions {
		versions[i] = archive(t, ruletest.WithMarker(ruletest.Rules(), marker(i)))
		markerOf[revisionOf(t, versions[i])] = marker(i)
	}

	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	var decisions atomic.Int64
	errs := make(chan error, 8)
	report := func(err error) {
		select {
		case errs <- err:
		default: // enough to go on
		}
	}
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ctx.Err() == nil; i++ {
				s := r.Acquire()
				a := s.Attached().(*attachment)
				// Each version knows only its own fork: one decision of
				// another version's marker would show a mixed snapshot.
				m := marker((g + i) % swaps)
				d := decide(t, s, m+" 1.0")
				if known := d.DeviceType == "kDLCUDA"; known != (markerOf[s.Revision()] == m) {
					report(fmt.Errorf("revision %s (marker %q) decided %q as %v", s.Revision(), markerOf[s.Revision()], m, d))
				}
				if a.closes.Load() != 0 || a.revision != s.Revision() {
					report(fmt.Errorf("revision %s: its attachment was closed while held", s.Revision()))
				}
				s.Release()
				decisions.Add(1)
			}
		}()
	}
	for i, v := range versions {
		if err := r.Offer(context.Background(), &live.Candidate{Origin: fmt.Sprint("v", i), Archive: v}); err != nil {
			t.Fatalf("Offer(v%d): %v", i, err)
		}
	}
	cancel()
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	r.Close()
	mu.Lock()
	defer mu.Unlock()
	if len(attached) != swaps+1 {
		t.Fatalf("%d snapshots prepared, want %d", len(attached), swaps+1)
	}
	for _, a := range attached {
		if n := a.closes.Load(); n != 1 {
			t.Errorf("revision %s's attachment closed %d times, want once", a.revision, n)
		}
	}
	t.Logf("%d decisions during %d swaps", decisions.Load(), swaps)
}
