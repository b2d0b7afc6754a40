package serve

import (
	"context"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dlroute/dlroute/internal/testkit/ruletest"
	"github.com/dlroute/dlroute/internal/testkit/testenv"
	"github.com/dlroute/dlroute/live"
)

// closeRecorder is a snapshot's Attached that tells when it is closed,
// by revision.
type closeRecorder struct {
	revision string
	closed   chan<- string
	once     sync.Once
}

func (c *closeRecorder) Close() error {
	c.once.Do(func() { c.closed <- c.revision })
	return nil
}

// TestSlowBodyDoesNotPinSnapshot sends half a body, swaps the rules while
// the rest is still to come, and checks that the old snapshot is closed
// before the body is done, and that the request is answered whole by the
// new revision: a slow client holds no retired rules (issue 12, item 6).
func TestSlowBodyDoesNotPinSnapshot(t *testing.T) {
	closed := make(chan string, 4)
	gate := live.Gate{Prepare: func(_ context.Context, s *live.Snapshot) (io.Closer, error) {
		return &closeRecorder{revision: s.Revision(), closed: closed}, nil
	}}
	ts := newTestServerGate(t, live.Static("rules", ruletest.Rules()), gate, HandlerConfig{})
	old := ts.rules.Current().Revision()

	body, write := io.Pipe()
	defer write.Close()
	answered := make(chan *http.Response, 1)
	go func() {
		resp, err := http.Post(ts.URL+"/v1/resolve", "application/json", body)
		if err != nil {
			t.Errorf("the slow request failed: %v", err)
		}
		answered <- resp
	}()
	write.Write([]byte("[" + cudaInput + ","))
	waitUntil(t, "the slow request is in flight", func() bool { return gauge(ts.metrics, "dlroute_resolve_in_flight") == 1 })

	next := archive(t, ruletest.WithMarker(ruletest.Rules(), "nvfork"))
	if err := ts.rules.Offer(context.Background(), &live.Candidate{Origin: "v2", Archive: next}); err != nil {
		t.Fatalf("Offer: %v", err)
	}
	revision := ts.rules.Current().Revision()
	select {
	case rev := <-closed:
		if rev != old {
			t.Fatalf("the swap closed revision %s; want the old one, %s", rev, old)
		}
	case <-time.After(testenv.Patience(t)):
		t.Fatalf("the old snapshot (%s) is still open when the test's time ran out: the slow body holds it", old)
	}

	write.Write([]byte(`{"platform":"gpu","platform_version":"nvfork 1.0","local_hardware_id":0}]`))
	write.Close()
	resp := <-answered
	if resp == nil {
		return
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	if got := resp.Header.Get(RevisionHeader); resp.StatusCode != http.StatusOK || got != revision {
		t.Fatalf("the slow request: status %d, revision %q; want 200 from the new revision %s: %s", resp.StatusCode, got, revision, out)
	}
	const want = `[{"device_type":"kDLCUDA","device_type_code":2,"device_id":0,"rule":"gpu","ruleset":"jax@v3","revision":"REV"},` +
		`{"device_type":"kDLCUDA","device_type_code":2,"device_id":0,"rule":"gpu","ruleset":"jax@v3","revision":"REV"}]` + "\n"
	if got, want := string(out), strings.ReplaceAll(want, "REV", revision); got != want {
		t.Fatalf("the slow request's answer:\n got %s\nwant %s", got, want)
	}
}
