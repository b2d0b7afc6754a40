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
// every Config.Interval. After a fetch fails, the
// wait doubles for each failure in a row, up to Config.MaxBackoff, so a
// failing server is not hammered; a refused candidate does not back off,
// since the next may be fixed. Each wait varies by up to a tenth, so that
// hosts started together do not poll together. Outcomes go to Status and
// Config.Observe; Watch returns nil when ctx ends.
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
	failures := 0
	for {
		select {
		case <-ctx.Done():
			return nil
		case _, ok := <-changes:
			if !ok {
				changes = nil
			} else {
				settled.Reset(settle) // check once the writes stop
			}
			continue
		case <-settled.C:
		case <-poll.C:
		}
		var ref *Refusal
		if err := r.Check(ctx); errors.As(err, &ref) && ref.Stage == StageFetch {
			failures++
		} else {
			failures = 0
		}
		poll.Reset(backoff(interval, maxBackoff, failures))
	}
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
