package live_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"testing/fstest"
	"time"

	"github.com/dlroute/dlroute/internal/testkit/ruletest"
	"github.com/dlroute/dlroute/live"
)

// watch opens rules from src and watches them until the test ends, with
// polling out of the way so that only file-system events cause checks.
func watch(t *testing.T, src live.Source) (*live.Rules, <-chan live.Event) {
	t.Helper()
	observe, events := observer()
	r, err := live.Open(context.Background(), live.Config{Source: src, Observe: observe, Interval: time.Hour, Settle: 20 * time.Millisecond})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		r.Watch(ctx)
		close(done)
	}()
	t.Cleanup(func() {
		cancel()
		<-done
		r.Close()
	})
	waitFor(t, events, "the first activation", func(e live.Event) bool { return e.Outcome == live.Activated })
	// Watch checks once when its notifications are set up: after that
	// check, every change is seen.
	waitFor(t, events, "Watch's first check", func(e live.Event) bool { return e.Outcome == live.Unchanged })
	return r, events
}

func activated(t *testing.T, events <-chan live.Event, what string, ok func(*live.Snapshot) bool) *live.Snapshot {
	t.Helper()
	return waitFor(t, events, what, func(e live.Event) bool { return e.Outcome == live.Activated && ok(e.Snapshot) }).Snapshot
}

func TestDirWatch(t *testing.T) {
	dir := t.TempDir()
	base := ruletest.Rules()
	if err := ruletest.WriteDir(dir, base); err != nil {
		t.Fatal(err)
	}
	r, events := watch(t, live.Dir(dir))

	// A marker added in place is activated.
	b := ruletest.WithMarker(base, "nvfork")
	ruletest.WriteDir(dir, b)
	s := activated(t, events, "the marker edit", func(s *live.Snapshot) bool { return decide(t, s, "nvfork 1.0").DeviceType == "kDLCUDA" })
	if r.Current() != s {
		t.Fatalf("the activated snapshot is not the current one")
	}

	// An edit that breaks the rules is refused; b stays.
	ruletest.WriteDir(dir, ruletest.WithTypo(b))
	e := waitFor(t, events, "the typo's refusal", func(e live.Event) bool { return e.Outcome == live.Refused })
	if e.Refusal.Stage != live.StageCompile || r.Current() != s {
		t.Fatalf("the typo: refused at %s (%s), current changed %v; want compile, b still in force", e.Refusal.Stage, e.Refusal.Reason, r.Current() != s)
	}
	// Fixed, the folder is b again: b stays, unchanged.
	ruletest.WriteDir(dir, b)
	e = waitFor(t, events, "the typo's fix", func(e live.Event) bool { return e.Outcome == live.Unchanged })
	if r.Current() != s || e.Snapshot != s {
		t.Fatalf("the fix: current changed %v, event's snapshot is b %v; want b in force and named, since the folder is back to it", r.Current() != s, e.Snapshot == s)
	}

	// A new version folder, moved in whole, is seen, and so are later
	// edits inside it: its folder is watched once it appears.
	staging := t.TempDir()
	v4 := fstest.MapFS{}
	for _, name := range []string{"manifest.yaml", "device_types.yaml", "rules.yaml", "tests.yaml"} {
		data := b["jax/v3/"+name].Data
		if name == "manifest.yaml" {
			data = ruletest.AsVersion(data, "v4")
		}
		v4["v4/"+name] = &fstest.MapFile{Data: data}
	}
	ruletest.WriteDir(staging, v4)
	if err := os.Rename(filepath.Join(staging, "v4"), filepath.Join(dir, "jax", "v4")); err != nil {
		t.Fatal(err)
	}
	activated(t, events, "jax@v4", func(s *live.Snapshot) bool { return slices.Contains(s.Manifest().RuleSets, "jax@v4") })
	v4rules := filepath.Join(dir, "jax", "v4", "rules.yaml")
	edited := bytes.Replace(v4["v4/rules.yaml"].Data, []byte("{marker: nvfork,"), []byte("{marker: nvfork2,"), 1)
	ruletest.WriteFile(v4rules, edited)
	waitFor(t, events, "the edit inside jax/v4 (its test of nvfork now fails)", func(e live.Event) bool {
		return e.Outcome == live.Refused && e.Refusal.Stage == live.StageTest
	})
}

func TestFileWatch(t *testing.T) {
	path := filepath.Join(t.TempDir(), "rules.tar.gz")
	a := archive(t, ruletest.Rules())
	b := archive(t, ruletest.WithMarker(ruletest.Rules(), "nvfork"))
	os.WriteFile(path, a, 0o644)
	r, events := watch(t, live.File(path))
	if r.Current().Revision() != revisionOf(t, a) {
		t.Fatalf("revision %s, want a's", r.Current().Revision())
	}
	ruletest.WriteFile(path, b)
	activated(t, events, "b renamed over a", func(s *live.Snapshot) bool { return s.Revision() == revisionOf(t, b) })

	ruletest.WriteFile(path, b[:len(b)/2])
	e := waitFor(t, events, "the truncated file's refusal", func(e live.Event) bool { return e.Outcome == live.Refused })
	if e.Refusal.Code != "truncated" || r.Current().Revision() != revisionOf(t, b) {
		t.Errorf("a truncated file: refused with %s; revision %s in force; want truncated, b", e.Refusal.Code, r.Current().Revision())
	}
}
