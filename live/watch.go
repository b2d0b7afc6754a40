package live

import (
	"cmp"
	"context"
	"errors"
	"math/rand/v2"
	"time"
)

// Watch checks the source until ctx ends: once as soon as a Watcher's
// notifications are set up (so a change made between Open and Watch is not
// missed), after each change once the changes settle (Config.Settle), and
// every Config.Interval. A check runs while Watch keeps watching: a change
// that settles while a check runs cancels it (Outcome Canceled), and the
// source is checked again at once, for its newest candidate; a poll that
// falls due while a check runs is skipped. After a fetch fails, the
// wait doubles for each failure in a row, up to Config.MaxBackoff, so a
// failing server is not hammered; a refused candidate does not back off,
// since the next may be fixed. Each wait varies by up to a tenth, so that
// hosts started together do not poll together. Outcomes go to Status and
// Config.Observe; Watch returns nil when ctx ends, once its check has
// stopped.
func (r *Rules) Watch(ctx context.Context) error {
	interval := cmp.Or(r.cfg.Interval, DefaultInterval)
	maxBackoff := max(cmp.Or(r.cfg.MaxBackoff, DefaultMaxBackoff), interval)
	settle := cmp.Or(r.cfg.Settle, DefaultSettle)

	var changes <-chan struct{}
	if w, ok := r.cfg.Source.(Watcher); ok {
		ch, err := w.Changes(ctx)
		if err != nil {
			r.record(Event{At: r.cfg.Now(), WatchError: err})
		}
		changes = ch
	}
	poll := time.NewTimer(backoff(interval, maxBackoff, 0))
	defer poll.Stop()
	settled := time.NewTimer(0) // the first check, now that changes are seen
	if changes == nil {
		settled.Stop()
	}
	defer settled.Stop()
	var running *watchCheck
	again := false // a change came while running ran: check again after it
	failures := 0
	for {
		var done <-chan struct{}
		if running != nil {
			done = running.done
		}
		select {
		case <-ctx.Done():
			if running != nil {
				<-running.done // the check's context is ctx's child: it stops
			}
			return nil
		case _, ok := <-changes:
			if !ok {
				changes = nil
			} else {
				settled.Reset(settle) // check once the writes stop
			}
			continue
		case <-settled.C:
			if running != nil {
				running.cancel(errSuperseded)
				again = true
				continue
			}
		case <-poll.C:
			if running != nil {
				continue // the check under way looks at the source already
			}
		case <-done:
			var ref *Refusal
			if errors.As(running.err, &ref) && ref.Stage == StageFetch {
				failures++
			} else {
				failures = 0
			}
			running = nil
			poll.Reset(backoff(interval, maxBackoff, failures))
			if !again {
				continue
			}
			again = false
		}
		running = r.startCheck(ctx)
	}
}

// errSuperseded is the cause of a check that Watch cancels for a newer
// change.
var errSuperseded = errors.New("a newer change came while it was checked; the newest is checked next")

// watchCheck is a check that Watch runs in its own goroutine.
type watchCheck struct {
	cancel context.CancelCauseFunc
	done   chan struct{} // closed once Check returned; err is set then
	err    error
}

func (r *Rules) startCheck(ctx context.Context) *watchCheck {
	ctx, cancel := context.WithCancelCause(ctx)
	c := &watchCheck{cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(c.done)
		defer cancel(nil)
		c.err = r.Check(ctx)
	}()
	return c
}

// backoff is the wait before the next check: interval, doubled per
// failure up to max, varied by up to a tenth either way.
func backoff(interval, max time.Duration, failures int) time.Duration {
	d := interval
	for range failures {
		if d >= max/2 {
			d = max
			break
		}
		d *= 2
	}
	return time.Duration(float64(d) * (0.9 + 0.2*rand.Float64()))
}
