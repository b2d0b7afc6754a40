package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/dlroute/dlroute/engine"
	"github.com/dlroute/dlroute/live"
	"github.com/dlroute/dlroute/playground"
)

// `dlroute playground --rules PATH` follows PATH: every change goes
// through the gate serve uses (package live), and what passes becomes the
// page's rules (playground/RATIONALE.md, "Why does the playground follow --rules through
// package live?").

// firstCheckWait is how long the playground waits for the first check of
// --rules before it listens: the shipped rules' check takes 0.9 s, and
// 4.7 s under the race detector on a busy 2-core machine, so rules that
// an honest person edits are checked before the page first loads them,
// and rules whose check would take minutes (bounded by
// live.DefaultCheckTimeout) do not keep the page from being served: it
// shows them as they are, and loads them once they pass. Tests shorten it.
var firstCheckWait = 20 * time.Second

// follower follows --rules for the playground.
type follower struct {
	rules      *live.Rules
	log        io.Writer
	started    time.Time
	first      chan struct{} // closed once the first check has its verdict
	firstOnce  sync.Once
	firstStage live.Stage // where the first check refused the rules; "" if it did not. Read after first closes.

	mu     sync.Mutex
	page   *playground.Handler // set by run
	missed []live.Event        // the events before run, for the page
}

// startFollowing watches PATH until ctx ends, from a first check at
// once: live.Rules.Watch, which cancels a check under way for a newer
// change, the first one included. Each event is logged; start waits for
// the first verdict.
func startFollowing(ctx context.Context, path string, stderr io.Writer) *follower {
	f := &follower{log: stderr, started: time.Now(), first: make(chan struct{})}
	f.rules, _ = live.New(live.Config{Source: rulesSource(path), Gate: live.Gate{Load: engine.Options{Cache: loads}}, Observe: f.observe})
	go func() {
		defer f.rules.Close()
		f.rules.Watch(ctx)
	}()
	return f
}

// start waits for the first check's verdict, until firstCheckWait after
// startFollowing, and returns the snapshot to serve: nil when none has
// passed yet. Rules that do not pass at start are served as they are, so
// that the page shows each error at its place in the editor; Watch
// activates the first change that passes.
func (f *follower) start(ctx context.Context, path string) *live.Snapshot {
	wait := time.NewTimer(time.Until(f.started.Add(firstCheckWait)))
	defer wait.Stop()
	select {
	case <-f.first:
		if f.firstStage != "" {
			fmt.Fprintf(f.log, "warning: %s does not pass its %s step; the page shows the rules as they are, and loads them once a change passes\n", path, f.firstStage)
		}
	case <-wait.C:
		fmt.Fprintf(f.log, "warning: %s is still being checked after %v; the page shows the rules as they are, and loads them once they pass\n", path, firstCheckWait)
	case <-ctx.Done():
	}
	return f.rules.Current()
}

// run tells page of every activation and refusal from now on, and first
// of those that came before (but the activation of served, the revision
// the page was made with).
func (f *follower) run(page *playground.Handler, served string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.page = page
	for _, e := range f.missed {
		if e.Outcome != live.Activated || e.Snapshot.Revision() != served {
			page.Observe(e)
		}
	}
	f.missed = nil
}

// observe logs what became of a check and tells the page; a refusal that
// only repeats the one before (a broken folder at every poll) is neither.
func (f *follower) observe(e live.Event) {
	if e.Outcome == live.Activated || e.Outcome == live.Refused || e.Outcome == live.Unchanged {
		f.firstOnce.Do(func() {
			if e.Outcome == live.Refused {
				f.firstStage = e.Refusal.Stage
			}
			close(f.first)
		})
	}
	if e.Repeated {
		return
	}
	logRulesEvent(f.log, e)
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.page == nil {
		f.missed = append(f.missed, e)
		return
	}
	f.page.Observe(e)
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
