package live_test

import (
	"context"
	"errors"
	"github.com/dlroute/dlroute/engine"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dlroute/dlroute/bundle"
	"github.com/dlroute/dlroute/internal/fsutil/atomicfile"
	"github.com/dlroute/dlroute/internal/testkit/ruletest"
	"github.com/dlroute/dlroute/live"
)

// sequenced packs fsys with a sequence, signed by private.
func sequenced(t testing.TB, fsys fs.FS, seq uint64, private string) []byte {
	t.Helper()
	data, _, err := ruletest.Bundle(fsys, bundle.BuildOptions{Sequence: seq, SignerKeys: []string{private}})
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// TestRollbackRefused is issue 12's rollback: with a newer signed bundle
// in force, an older validly signed one, a replay of an earlier one, one
// reusing the sequence in force and one from before sequences are each
// refused at verify with their code, and the newer stays in force; the
// same bundle again changes nothing.
func TestRollbackRefused(t *testing.T) {
	private, public, _ := bundle.GenerateKey("dlroute-rules")
	first := sequenced(t, ruletest.Rules(), 1, private)
	second := sequenced(t, ruletest.WithMarker(ruletest.Rules(), "nvfork"), 2, private)
	reused := sequenced(t, ruletest.WithMarker(ruletest.Rules(), "otherfork"), 2, private)
	unordered := archive(t, ruletest.WithMarker(ruletest.Rules(), "otherfork"), private)
	observe, events := observer()
	r, err := live.New(live.Config{Source: live.Static("unused", ruletest.Rules()), Gate: live.Gate{Keys: []string{public}}, Observe: observe})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	offer := func(origin string, data []byte) error {
		return r.Offer(context.Background(), &live.Candidate{Origin: origin, Archive: data})
	}
	if err := offer("first", first); err != nil {
		t.Fatalf("Offer(first): %v", err)
	}
	if err := offer("second", second); err != nil {
		t.Fatalf("Offer(second): %v", err)
	}

	tests := []struct {
		name string
		data []byte
		want engine.Code
	}{
		{"replay of first", first, live.CodeRollback},
		{"reused sequence 2", reused, live.CodeSequenceReused},
		{"unordered", unordered, live.CodeRollback},
	}
	for _, tt := range tests {
		ref := refusal(t, offer(tt.name, tt.data))
		var rollback *live.RollbackError
		if ref.Stage != live.StageVerify || ref.Code != tt.want || !errors.As(ref, &rollback) || rollback.Newer != 2 || rollback.NewerWhere != "in force" {
			t.Errorf("Offer(%s) = %v (stage %s, code %s); want %s at verify, against sequence 2 in force", tt.name, ref, ref.Stage, ref.Code, tt.want)
		}
		if e := waitFor(t, events, tt.name+"'s refusal", func(e live.Event) bool { return e.Outcome == live.Refused }); e.Refusal.Code != tt.want {
			t.Errorf("the observer saw %s refused with %s; want %s", tt.name, e.Refusal.Code, tt.want)
		}
		st := r.Status()
		if st.LastRefusal == nil || st.LastRefusal.Code != tt.want || st.LastRefusal.Revision != revisionOf(t, tt.data) || st.Active.Sequence != 2 || st.Active.Origin != "second" {
			t.Errorf("after %s, Status() = last refusal %+v, active %+v; want %s, and second (sequence 2) in force", tt.name, st.LastRefusal, st.Active, tt.want)
		}
		if d := decide(t, r.Current(), "nvfork 1.0"); d.DeviceType != "kDLCUDA" {
			t.Errorf("after %s, nvfork decided %v; want second's kDLCUDA", tt.name, d)
		}
	}

	if err := offer("second again", second); err != nil || r.Status().LastCheck.Outcome != live.Unchanged {
		t.Errorf("Offer(second) again = %v, outcome %s; want nil, unchanged", err, r.Status().LastCheck.Outcome)
	}
	if st := r.Status(); st.Activations != 2 || st.Refusals != len(tests) {
		t.Errorf("Status() = %d activations, %d refusals; want 2, %d", st.Activations, st.Refusals, len(tests))
	}
}

// TestAllowRollback is the operator's override: an older bundle is
// activated, and the activation says what it rolled back from.
func TestAllowRollback(t *testing.T) {
	private, public, _ := bundle.GenerateKey("dlroute-rules")
	first := sequenced(t, ruletest.Rules(), 1, private)
	second := sequenced(t, ruletest.WithMarker(ruletest.Rules(), "nvfork"), 2, private)
	observe, events := observer()
	r, _ := live.New(live.Config{Source: live.Static("unused", ruletest.Rules()), Gate: live.Gate{Keys: []string{public}, AllowRollback: true}, Observe: observe})
	defer r.Close()
	for _, c := range []*live.Candidate{{Origin: "second", Archive: second}, {Origin: "first", Archive: first}} {
		if err := r.Offer(context.Background(), c); err != nil {
			t.Fatalf("Offer(%s) with AllowRollback: %v", c.Origin, err)
		}
	}
	if e := waitFor(t, events, "second's activation", func(e live.Event) bool { return e.Outcome == live.Activated }); e.Rollback != nil {
		t.Errorf("second's activation carries a rollback: %v", e.Rollback)
	}
	e := waitFor(t, events, "first's activation", func(e live.Event) bool { return e.Outcome == live.Activated })
	if e.Rollback == nil || e.Rollback.Code != live.CodeRollback || e.Rollback.Sequence != 1 || e.Rollback.Newer != 2 || r.Current().Sequence() != 1 {
		t.Errorf("first's activation: rollback %+v, sequence in force %d; want a rollback from 2 to 1", e.Rollback, r.Current().Sequence())
	}
}

// TestRollbackAgainstKept is a restart whose source offers a bundle older
// than the kept one: it is refused, and the kept one is served, with its
// age; with AllowRollback the source's is served.
func TestRollbackAgainstKept(t *testing.T) {
	private, public, _ := bundle.GenerateKey("dlroute-rules")
	older := sequenced(t, ruletest.Rules(), 5, private)
	newer := sequenced(t, ruletest.WithMarker(ruletest.Rules(), "nvfork"), 9, private)
	dir := t.TempDir()
	keepPath, srcPath := filepath.Join(dir, "kept.tar.gz"), filepath.Join(dir, "rules.tar.gz")
	os.WriteFile(keepPath, newer, 0o600)
	keptAt := time.Now().Add(-3 * time.Hour).Truncate(time.Second)
	os.Chtimes(keepPath, keptAt, keptAt)
	os.WriteFile(srcPath, older, 0o644)
	open := func(allow bool) *live.Rules {
		r, err := live.Open(context.Background(), live.Config{Source: live.File(srcPath), Keep: keepPath, Gate: live.Gate{Keys: []string{public}, AllowRollback: allow}})
		if err != nil {
			t.Fatalf("Open(AllowRollback: %v): %v", allow, err)
		}
		t.Cleanup(func() { r.Close() })
		return r
	}

	st := open(false).Status()
	if ref := st.LastRefusal; ref == nil || ref.Code != live.CodeRollback || ref.Origin != srcPath || !strings.Contains(ref.Reason, "kept in "+keepPath) {
		t.Errorf("Open with an older source: last refusal %+v; want %s of %s against the kept bundle", ref, live.CodeRollback, srcPath)
	}
	if a := st.Active; a == nil || !a.Kept || a.Sequence != 9 || !a.KeptAt.Equal(keptAt) {
		t.Errorf("Open with an older source: active %+v; want the kept sequence 9, kept at %v", a, keptAt)
	}

	r := open(true)
	if s := r.Current(); s.Kept() || s.Sequence() != 5 || s.Origin() != srcPath || !s.KeptAt().IsZero() {
		t.Errorf("Open(AllowRollback) with an older source: %s's sequence %d, kept %v; want the source's 5", s.Origin(), s.Sequence(), s.Kept())
	}
}

// TestOpenRemovesStaleTemporaries: a host killed while it kept a bundle
// left a temporary file; the next Open removes it, and only it.
func TestOpenRemovesStaleTemporaries(t *testing.T) {
	dir := t.TempDir()
	keepPath := filepath.Join(dir, "kept.tar.gz")
	stale, other := filepath.Join(dir, ".kept.tar.gz.dlroute-4242.tmp"), filepath.Join(dir, ".notes.dlroute-4242.tmp")
	old := time.Now().Add(-atomicfile.StaleAfter - time.Minute)
	for _, p := range []string{stale, other} {
		os.WriteFile(p, []byte("half a bundle"), 0o600)
		os.Chtimes(p, old, old)
	}
	r := openStatic(t, ruletest.Rules(), live.Config{Keep: keepPath})
	r.Close()
	if _, err := os.Stat(stale); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("after Open, %s: %v; want it removed", stale, err)
	}
	if _, err := os.Stat(other); err != nil {
		t.Errorf("after Open, %s: %v; want it left", other, err)
	}
}
