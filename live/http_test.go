package live_test

import (
	"context"
	"fmt"
	"github.com/dlroute/dlroute/engine"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dlroute/dlroute/internal/testkit/ruletest"
	"github.com/dlroute/dlroute/live"
)

// bundleServer serves a bundle with an ETag, or a fault.
type bundleServer struct {
	mu        sync.Mutex
	body      []byte
	etag      string
	fault     string // "", "500", "hang", "huge"
	notModded int    // 304s answered
	requests  int
}

func (s *bundleServer) set(body []byte, etag, fault string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.body, s.etag, s.fault = body, etag, fault
}

func (s *bundleServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	body, etag, fault := s.body, s.etag, s.fault
	s.requests++
	s.mu.Unlock()
	switch fault {
	case "500":
		http.Error(w, "the bundle store is down\nsecond line", http.StatusInternalServerError)
		return
	case "hang":
		<-r.Context().Done() // until the client gives up
		return
	case "huge":
		// 1 GB, streamed without a Content-Length; the client must stop
		// reading long before the end.
		chunk := make([]byte, 1<<20)
		for range 1024 {
			if _, err := w.Write(chunk); err != nil {
				return
			}
		}
		return
	}
	if r.Header.Get("If-None-Match") == etag {
		s.mu.Lock()
		s.notModded++
		s.mu.Unlock()
		w.WriteHeader(http.StatusNotModified)
		return
	}
	w.Header().Set("ETag", etag)
	w.Write(body)
}

func TestHTTPSource(t *testing.T) {
	t.Parallel() // it waits out an HTTP timeout; the package's other parallel tests run meanwhile
	a := archive(t, ruletest.Rules())
	b := archive(t, ruletest.WithMarker(ruletest.Rules(), "nvfork"))
	srv := &bundleServer{}
	srv.set(a, `"a"`, "")
	ts := httptest.NewServer(srv)
	defer ts.Close()
	src, err := live.HTTP(ts.URL+"/rules.tar.gz", live.HTTPOptions{Timeout: 2 * time.Second, MaxSize: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	r, err := live.Open(context.Background(), live.Config{Source: src})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	defer r.Close()
	revA := revisionOf(t, a)
	if got := r.Current().Revision(); got != revA {
		t.Fatalf("revision %s, want %s", got, revA)
	}

	// An unchanged bundle is a 304: no download, no check.
	if err := r.Check(context.Background()); err != nil {
		t.Fatalf("Check with the same ETag: %v", err)
	}
	if srv.notModded != 1 || r.Status().LastCheck.Outcome != live.Unchanged {
		t.Errorf("after a second Check: %d 304s, outcome %s; want 1, unchanged", srv.notModded, r.Status().LastCheck.Outcome)
	}

	faults := []struct {
		fault     string
		code      engine.Code
		reasonHas string
	}{
		{"500", live.CodeHTTPStatus, "answered 500 Internal Server Error: the bundle store is down"},
		{"hang", live.CodeTimeout, "did not answer within 2s"},
		{"huge", live.CodeTooLong, "body is larger than 1048576 bytes"},
	}
	for _, f := range faults {
		t.Run(f.fault, func(t *testing.T) {
			srv.set(b, `"b"`, f.fault)
			ref := refusal(t, r.Check(context.Background()))
			if ref.Stage != live.StageFetch || ref.Code != f.code || !strings.Contains(ref.Reason, f.reasonHas) {
				t.Errorf("Check refused at %s with %s: %q; want fetch, %s, %q", ref.Stage, ref.Code, ref.Reason, f.code, f.reasonHas)
			}
			if got := r.Current().Revision(); got != revA {
				t.Errorf("after the %s, revision %s is in force; want %s", f.fault, got, revA)
			}
			if st := r.Status(); st.LastRefusal != ref || st.LastCheck.Outcome != live.Refused {
				t.Errorf("Status() last refusal %v, outcome %s; want %v, refused", st.LastRefusal, st.LastCheck.Outcome, ref)
			}
		})
	}

	// The server recovers: the new bundle is activated.
	srv.set(b, `"b"`, "")
	if err := r.Check(context.Background()); err != nil {
		t.Fatalf("Check after recovery: %v", err)
	}
	if got := r.Current().Revision(); got != revisionOf(t, b) {
		t.Errorf("after recovery, revision %s; want %s", got, revisionOf(t, b))
	}
}

func TestHTTPUnreachable(t *testing.T) {
	ts := httptest.NewServer(http.NotFoundHandler())
	url := ts.URL
	ts.Close() // nothing listens there now
	src, _ := live.HTTP(url+"/rules.tar.gz", live.HTTPOptions{})
	_, err := live.Open(context.Background(), live.Config{Source: src})
	if ref := refusal(t, err); ref.Code != live.CodeUnreachable || ref.Stage != live.StageFetch {
		t.Errorf("Open of an unreachable URL refused with %s at %s: %s; want unreachable at fetch", ref.Code, ref.Stage, ref.Reason)
	}
}

func TestHTTPURL(t *testing.T) {
	for _, u := range []string{"ftp://example.com/b", "/just/a/path", "http://", "::"} {
		if _, err := live.HTTP(u, live.HTTPOptions{}); err == nil {
			t.Errorf("HTTP(%q) = nil error, want one", u)
		}
	}
	src, _ := live.HTTP("https://ops:secret@rules.example/b.tar.gz", live.HTTPOptions{})
	if s := fmt.Sprint(src); strings.Contains(s, "secret") {
		t.Errorf("String() = %q shows the password", s)
	}
}
