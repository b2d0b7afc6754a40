package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/dlroute/dlroute/live"
	"github.com/dlroute/dlroute/playground"
)

// `dlroute playground --rules PATH` follows PATH: every change goes
// through the gate serve uses (package live), and what passes becomes the
// page's rules (RATIONALE.md, "Why the playground follows --rules through
// package live").

// follower follows --rules for the playground.
type follower struct {
	cfg     live.Config
	rules   *live.Rules         // nil while nothing has passed
	refusal *live.Refusal       // why nothing passed at start
	changes <-chan struct{}     // the source's changes while nothing has passed
	stop    context.CancelFunc  // stops changes
	page    *playground.Handler // set by run; events before it go to the log only
}

// startFollowing checks PATH once, logging what became of it to stderr.
// Rules that do not pass are served as they are, so that the page shows
// each error at its place in the editor; run opens them again after each
// change.
func startFollowing(ctx context.Context, path string, stderr io.Writer) *follower {
	f := &follower{}
	f.cfg = live.Config{Source: rulesSource(path), Observe: func(e live.Event) {
		logRulesEvent(stderr, e)
		if f.page != nil {
			f.page.Observe(e)
		}
	}}
	// Changes are watched from before the first check, so that none made
	// after it is missed while nothing passes.
	var watchCtx context.Context
	watchCtx, f.stop = context.WithCancel(ctx)
	if w, ok := f.cfg.Source.(live.Watcher); ok {
		f.changes, _ = w.Changes(watchCtx)
	}
	var err error
	if f.rules, err = live.Open(ctx, f.cfg); err == nil {
		f.stop() // Watch sets up its own
		return f
	}
	if !errors.As(err, &f.refusal) {
		f.refusal = &live.Refusal{Origin: path, Stage: live.StageFetch, Code: "error", Reason: err.Error()}
	}
	fmt.Fprintf(stderr, "warning: %s does not pass its %s step; the page shows the rules as they are, and loads them once a change passes\n", path, f.refusal.Stage)
	return f
}

// current is the snapshot in force, or nil while nothing has passed.
func (f *follower) current() *live.Snapshot {
	if f.rules == nil {
		return nil
	}
	return f.rules.Current()
}

// run tells page of every activation and refusal until ctx ends.
func (f *follower) run(ctx context.Context, page *playground.Handler) {
	f.page = page
	if f.refusal != nil {
		page.Refused(f.refusal)
	}
	if f.rules == nil {
		f.rules = f.openOnChange(ctx)
		f.stop()
		if f.rules == nil {
			return
		}
	}
	defer f.rules.Close()
	f.rules.Watch(ctx)
}

// openOnChange opens the rules once a candidate passes, checking after
// each change of the source (once its writes settle) and every interval,
// as Watch does; nil when ctx ends first.
func (f *follower) openOnChange(ctx context.Context) *live.Rules {
	poll := time.NewTicker(cmp.Or(f.cfg.Interval, live.DefaultInterval))
	defer poll.Stop()
	settle := time.NewTimer(0)
	settle.Stop()
	defer settle.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case _, ok := <-f.changes:
			if !ok {
				f.changes = nil // the poll still checks
			} else {
				settle.Reset(live.DefaultSettle) // an editor writes in steps
			}
			continue
		case <-settle.C:
		case <-poll.C:
		}
		if r, err := live.Open(ctx, f.cfg); err == nil {
			return r
		}
	}
}

// rulesSource is the live source of --rules: a folder or a bundle file.
func rulesSource(path string) live.Source {
	if st, err := os.Stat(path); err == nil && st.Mode().IsRegular() {
		return live.File(path)
	}
	return live.Dir(path)
}

// logRulesEvent tells the person running the playground what became of
// a change to --rules.
func logRulesEvent(w io.Writer, e live.Event) {
	switch e.Outcome {
	case live.Activated:
		s := e.Snapshot
		fmt.Fprintf(w, "rules: %s revision %s is in force (%s), checked in %d ms\n",
			s.Origin(), s.Revision(), strings.Join(s.Manifest().RuleSets, " "), e.Took.Milliseconds())
	case live.Refused:
		fmt.Fprintf(w, "rules: %s\n", e.Refusal.Error())
	}
	if e.WatchError != nil {
		fmt.Fprintf(w, "warning: changes to the rules are not seen as they happen (%v); they are checked every %s instead\n", e.WatchError, live.DefaultInterval)
	}
}
