package live_test

import (
	"bytes"
	"context"
	"errors"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dlroute/dlroute/bundle"
	"github.com/dlroute/dlroute/internal/testkit/ruletest"
	"github.com/dlroute/dlroute/live"
)

// TestKeptAtRestart is a host restarted while its bundle server is down:
// it serves the last bundle it activated, kept on disk, until the server
// is back.
func TestKeptAtRestart(t *testing.T) {
	private, public, _ := bundle.GenerateKey("dlroute-rules")
	b := archive(t, ruletest.WithMarker(ruletest.Rules(), "nvfork"), private)
	c := archive(t, ruletest.WithMarker(ruletest.Rules(), "otherfork"), private)
	srv := &bundleServer{}
	srv.set(b, `"b"`, "")
	ts := httptest.NewServer(srv)
	defer ts.Close()
	keepPath := filepath.Join(t.TempDir(), "state", "last-good.tar.gz")
	open := func() (*live.Rules, error) {
		src, _ := live.HTTP(ts.URL+"/rules.tar.gz", live.HTTPOptions{})
		return live.Open(context.Background(), live.Config{Source: src, Keep: keepPath, Gate: live.Gate{Keys: []string{public}}})
	}

	// The first run activates b and keeps it.
	r, err := open()
	if err != nil {
		t.Fatalf("first Open: %v", err)
	}
	if kept, _ := os.ReadFile(keepPath); !bytes.Equal(kept, b) {
		t.Fatalf("the kept file holds %d bytes, want b's %d", len(kept), len(b))
	}
	r.Close()

	// The server fails; a restart serves the kept b.
	srv.set(nil, "", "500")
	r, err = open()
	if err != nil {
		t.Fatalf("Open with the server down: %v", err)
	}
	s := r.Current()
	if !s.Kept() || s.Origin() != keepPath || s.Revision() != revisionOf(t, b) || decide(t, s, "nvfork 1.0").DeviceType != "kDLCUDA" {
		t.Fatalf("after a restart with the server down: kept %v, origin %s, revision %s; want the kept b from %s", s.Kept(), s.Origin(), s.Revision(), keepPath)
	}
	st := r.Status()
	if st.LastRefusal == nil || st.LastRefusal.Code != live.CodeHTTPStatus || !st.Active.Kept {
		t.Errorf("Status() = last refusal %v, active kept %v; want the 500, true", st.LastRefusal, st.Active.Kept)
	}

	// The server is back with c: c is activated and kept.
	srv.set(c, `"c"`, "")
	if err := r.Check(context.Background()); err != nil {
		t.Fatalf("Check with the server back: %v", err)
	}
	if s := r.Current(); s.Kept() || s.Revision() != revisionOf(t, c) {
		t.Errorf("with the server back: kept %v, revision %s; want false, %s", s.Kept(), s.Revision(), revisionOf(t, c))
	}
	if kept, _ := os.ReadFile(keepPath); !bytes.Equal(kept, c) {
		t.Errorf("the kept file holds %d bytes, want c's %d", len(kept), len(c))
	}
	r.Close()

	// A kept file that was changed on disk is refused like any bundle, and
	// with the server down there is nothing to serve.
	os.WriteFile(keepPath, withChangedFile(t, c), 0o600)
	srv.set(nil, "", "500")
	_, err = open()
	var refusals []*live.Refusal
	for _, e := range err.(interface{ Unwrap() []error }).Unwrap() {
		var ref *live.Refusal
		if errors.As(e, &ref) {
			refusals = append(refusals, ref)
		}
	}
	if len(refusals) != 2 || refusals[0].Code != live.CodeHTTPStatus || refusals[1].Code != bundle.CodeDigest || refusals[1].Origin != keepPath {
		t.Errorf("Open with the server down and the kept file changed = %v; want the 500 and the kept file's digest_mismatch", err)
	}
}

func TestKeptDirAtRestart(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "rules")
	keepPath := filepath.Join(t.TempDir(), "last-good.tar.gz")
	if err := ruletest.WriteDir(dir, ruletest.WithMarker(ruletest.Rules(), "nvfork")); err != nil {
		t.Fatal(err)
	}
	r, err := live.Open(context.Background(), live.Config{Source: live.Dir(dir), Keep: keepPath})
	if err != nil {
		t.Fatal(err)
	}
	rev := r.Current().Revision()
	r.Close()
	os.RemoveAll(dir)
	r, err = live.Open(context.Background(), live.Config{Source: live.Dir(dir), Keep: keepPath})
	if err != nil {
		t.Fatalf("Open with the directory gone: %v", err)
	}
	defer r.Close()
	if s := r.Current(); !s.Kept() || s.Revision() != rev {
		t.Errorf("with the directory gone: kept %v, revision %s; want true, %s", s.Kept(), s.Revision(), rev)
	}
}

func TestKeepFails(t *testing.T) {
	blocker := filepath.Join(t.TempDir(), "a-file")
	os.WriteFile(blocker, nil, 0o600)
	observe, events := observer()
	r := openStatic(t, ruletest.Rules(), live.Config{Keep: filepath.Join(blocker, "last-good.tar.gz"), Observe: observe})
	e := waitFor(t, events, "the activation", func(e live.Event) bool { return e.Outcome == live.Activated })
	if e.KeepError == nil || r.Current() == nil || !strings.Contains(r.Status().KeepError, "not a directory") {
		t.Errorf("keeping under a file: event keep error %v, status %q; want the activation to stand and the error reported", e.KeepError, r.Status().KeepError)
	}
}
