package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/dlroute/dlroute/engine"
	"github.com/dlroute/dlroute/live"
	"github.com/dlroute/dlroute/playground"
)

// `dlroute playground --rules PATH` follows PATH: every change goes
// through the gate serve uses (package live), and what passes becomes the
// page's rules (RATIONALE.md, "Why does the playground follow --rules through
// package live?").

// follower follows --rules for the playground.
type follower struct {
	rules   *live.Rules
	refusal *live.Refusal       // why nothing passed at start
	page    *playground.Handler // set by run; events before it go to the log only
	log     io.Writer
}

// startFollowing checks PATH once, logging what became of it. Rules that
// do not pass are served as they are, so that the page shows each error
// at its place in the editor; run's Watch activates the first change
// that passes.
func startFollowing(ctx context.Context, path string, stderr io.Writer) *follower {
	f := &follower{log: stderr}
	f.rules, _ = live.New(live.Config{Source: rulesSource(path), Gate: live.Gate{Load: engine.Options{Cache: loads}}, Observe: f.observe})
	if err := f.rules.Check(ctx); err != nil {
		errors.As(err, &f.refusal) // Check's error is a *live.Refusal
		fmt.Fprintf(stderr, "warning: %s does not pass its %s step; the page shows the rules as they are, and loads them once a change passes\n", path, f.refusal.Stage)
	}
	return f
}

// run tells page of every activation and refusal until ctx ends. Watch
// checks once as soon as it sees changes, so none made since the first
// check is missed.
func (f *follower) run(ctx context.Context, page *playground.Handler) {
	f.page = page
	if f.refusal != nil {
		page.Refused(f.refusal)
	}
	defer f.rules.Close()
	f.rules.Watch(ctx)
}

// observe logs what became of a check and tells the page; a refusal that
// only repeats the one before (a broken folder at every poll) is neither.
func (f *follower) observe(e live.Event) {
	if e.Repeated {
		return
	}
	logRulesEvent(f.log, e)
	if f.page != nil {
		f.page.Observe(e)
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
