package playground_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/dlroute/dlroute/internal/testkit/ruletest"
	"github.com/dlroute/dlroute/internal/testkit/testenv"
	"github.com/dlroute/dlroute/playground"
)

// At MaxEventStreams open streams a new one is refused with 503, a
// Retry-After and a message that says why, while the open ones keep
// streaming; once a page closes, a new stream is admitted again.
func TestEventStreamsAreBounded(t *testing.T) {
	h, err := playground.New(playground.Options{Rules: ruletest.Rules(), Source: "rules", Revision: "r1", Live: true, Module: fakeModule})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close) // after the streams' bodies close
	pages := make([]*events, playground.MaxEventStreams)
	var ann map[string]string
	for i := range pages {
		pages[i] = listen(t, srv.URL)
		pages[i].next("rules", &ann)
	}

	status, retry, msg := getEvents(t, srv.URL)
	if status != http.StatusServiceUnavailable || retry == "" || !strings.Contains(msg, "event streams open") {
		t.Fatalf("GET /events with %d streams open: %d, Retry-After %q, %q; want 503 with a Retry-After and the reason",
			playground.MaxEventStreams, status, retry, msg)
	}

	// The open streams still hear of new rules.
	if err := h.Publish(ruletest.WithMarker(ruletest.Rules(), "nvfork"), "r2"); err != nil {
		t.Fatal(err)
	}
	for _, p := range []*events{pages[0], pages[len(pages)-1]} {
		if p.next("rules", &ann); ann["revision"] != "r2" {
			t.Fatalf("an open stream heard %v; want r2", ann)
		}
	}

	// A page that goes away frees its place.
	pages[0].body.Close()
	deadline := time.Now().Add(testenv.Patience(t))
	for {
		resp, err := http.Get(srv.URL + "/events")
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode == http.StatusOK {
			resp.Body.Close()
			break
		}
		resp.Body.Close()
		if time.Now().After(deadline) {
			t.Fatalf("GET /events after a page closed: %d until the test's time ran out; want 200", resp.StatusCode)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// getEvents is GET /events: its status, Retry-After and body.
func getEvents(t *testing.T, url string) (int, string, string) {
	t.Helper()
	resp, err := http.Get(url + "/events")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<10))
	return resp.StatusCode, resp.Header.Get("Retry-After"), string(body)
}
