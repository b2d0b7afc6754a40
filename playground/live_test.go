package playground_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/dlroute/dlroute/internal/testkit/ruletest"
	"github.com/dlroute/dlroute/internal/testkit/testenv"
	"github.com/dlroute/dlroute/live"
	"github.com/dlroute/dlroute/playground"
)

// event is one server-sent event.
type event struct{ name, data string }

// events reads a stream of server-sent events.
type events struct {
	t    *testing.T
	body io.ReadCloser
	ch   chan event
}

// listen opens /events on a real server: a recorder cannot stream.
func listen(t *testing.T, url string) *events {
	t.Helper()
	resp, err := http.Get(url + "/events")
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("GET /events: %d %q", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	e := &events{t: t, body: resp.Body, ch: make(chan event, 16)}
	t.Cleanup(func() { resp.Body.Close() })
	go func() {
		defer close(e.ch)
		lines := bufio.NewScanner(resp.Body)
		var cur event
		for lines.Scan() {
			switch line := lines.Text(); {
			case line == "" && cur.name != "":
				e.ch <- cur
				cur = event{}
			case strings.HasPrefix(line, "event: "):
				cur.name = strings.TrimPrefix(line, "event: ")
			case strings.HasPrefix(line, "data: "):
				cur.data = strings.TrimPrefix(line, "data: ")
			}
		}
	}()
	return e
}

// next returns the next event, which must be named name, and decodes its
// data into v.
func (e *events) next(name string, v any) {
	e.t.Helper()
	select {
	case ev, ok := <-e.ch:
		if !ok {
			e.t.Fatalf("the stream ended; want a %s event", name)
		}
		if ev.name != name {
			e.t.Fatalf("got a %s event (%s); want %s", ev.name, ev.data, name)
		}
		if err := json.Unmarshal([]byte(ev.data), v); err != nil {
			e.t.Fatalf("%s event: %v: %s", name, err, ev.data)
		}
	case <-time.After(testenv.Patience(e.t)):
		e.t.Fatalf("no %s event when the test's time ran out", name)
	}
}

type rulesDoc struct {
	Source   string            `json:"source"`
	Revision string            `json:"revision"`
	Live     bool              `json:"live"`
	Files    map[string]string `json:"files"`
}

type refusedDoc struct {
	Stage  string `json:"stage"`
	Code   string `json:"code"`
	Reason string `json:"reason"`
	Errors []struct {
		Code     string `json:"code"`
		Position struct {
			File string `json:"file"`
			Line int    `json:"line"`
		} `json:"position"`
		Source string `json:"source"`
	} `json:"errors"`
}

func rulesJSON(t *testing.T, h http.Handler) (rulesDoc, string) {
	t.Helper()
	resp := get(h, "GET", "/rules.json")
	var doc rulesDoc
	if err := json.NewDecoder(resp.Body).Decode(&doc); err != nil {
		t.Fatal(err)
	}
	return doc, resp.Header.Get("ETag")
}

// A page follows the rules: each version that passes the gate replaces
// rules.json and is announced; a refused one is announced with its errors
// at their positions while rules.json stays; the source going back to
// the rules served withdraws the refusal.
func TestLiveRulesFollowTheGate(t *testing.T) {
	base := ruletest.Rules()
	h, err := playground.New(playground.Options{Rules: base, Source: "rules", Revision: "r1", Live: true, Module: fakeModule})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close) // after the streams' bodies close
	page := listen(t, srv.URL)
	var ann map[string]string
	page.next("rules", &ann)
	if ann["revision"] != "r1" || ann["source"] != "rules" {
		t.Fatalf("the first event is %v; want the rules served, r1 from rules", ann)
	}
	doc, etag1 := rulesJSON(t, h)
	if !doc.Live || doc.Revision != "r1" {
		t.Fatalf("rules.json says live %v, revision %q; want true, r1", doc.Live, doc.Revision)
	}

	// A version with a new marker passes the gate and is published.
	gate := live.Gate{}
	marked, err := gate.Admit(context.Background(), &live.Candidate{Origin: "rules", Dir: ruletest.WithMarker(base, "nvfork")})
	if err != nil {
		t.Fatal(err)
	}
	h.Observe(live.Event{Outcome: live.Activated, Snapshot: marked})
	page.next("rules", &ann)
	if ann["revision"] != marked.Revision() {
		t.Fatalf("after the activation the page is told of %v; want revision %s", ann, marked.Revision())
	}
	doc, etag2 := rulesJSON(t, h)
	if doc.Revision != marked.Revision() || !strings.Contains(doc.Files["jax/v3/rules.yaml"], "marker: nvfork") || etag2 == etag1 {
		t.Fatalf("rules.json after the activation: revision %s, marker in it %v, ETag changed %v", doc.Revision,
			strings.Contains(doc.Files["jax/v3/rules.yaml"], "marker: nvfork"), etag2 != etag1)
	}

	// A typo is refused at compile: the page learns where; rules.json stays.
	_, err = gate.Admit(context.Background(), &live.Candidate{Origin: "rules", Dir: ruletest.WithTypo(ruletest.WithMarker(base, "nvfork"))})
	var ref *live.Refusal
	if !errors.As(err, &ref) {
		t.Fatalf("the typo was not refused: %v", err)
	}
	h.Observe(live.Event{Outcome: live.Refused, Refusal: ref})
	var refused refusedDoc
	page.next("refused", &refused)
	if refused.Stage != "compile" || len(refused.Errors) == 0 || refused.Errors[0].Position.File != "rules/jax/v3/rules.yaml" ||
		refused.Errors[0].Position.Line == 0 || !strings.Contains(refused.Errors[0].Source, "platform_versoin") {
		t.Fatalf("the refused event: %+v; want the compile stage and the typo's position and line", refused)
	}
	if doc, _ := rulesJSON(t, h); doc.Revision != marked.Revision() {
		t.Fatalf("the refusal changed rules.json to %s", doc.Revision)
	}

	// A page that connects now hears of the rules served, then the refusal.
	late := listen(t, srv.URL)
	late.next("rules", &ann)
	late.next("refused", &refused)

	// A poll that finds nothing new says nothing. A stream writes only what
	// differs from what it sent, so nothing is said when the state is as it
	// was: a page that connects now still hears the rules served and then
	// the refusal. The source back to the rules served withdraws the
	// refusal, with the same revision, and that is the next event the
	// first page hears.
	h.Observe(live.Event{Outcome: live.Unchanged})
	again := listen(t, srv.URL)
	again.next("rules", &ann)
	again.next("refused", &refused)
	if ann["revision"] != marked.Revision() {
		t.Fatalf("after a poll that found nothing new a page hears %v; want revision %s", ann, marked.Revision())
	}
	h.Observe(live.Event{Outcome: live.Unchanged, Snapshot: marked})
	page.next("rules", &ann)
	late.next("rules", &ann)
	if ann["revision"] != marked.Revision() {
		t.Fatalf("the withdrawal names %v; want revision %s", ann, marked.Revision())
	}
}

// Rules with no version folders are not published: rules.json stays.
func TestPublishRefusesEmptyRules(t *testing.T) {
	h, err := playground.New(playground.Options{Rules: ruletest.Rules(), Source: "rules", Revision: "r1", Live: true, Module: fakeModule})
	if err != nil {
		t.Fatal(err)
	}
	if err := h.Publish(fstest.MapFS{"README.md": {Data: []byte("no rules")}}, "r2"); err == nil {
		t.Fatalf("Publish of a folder without rules succeeded")
	}
	if doc, _ := rulesJSON(t, h); doc.Revision != "r1" || len(doc.Files) == 0 {
		t.Fatalf("after a failed Publish rules.json is %s with %d files; want r1 as it was", doc.Revision, len(doc.Files))
	}
}

// Rules that do not change serve no events, and the static site never
// asks for them.
func TestEventsOnlyWhenLive(t *testing.T) {
	h := servedHandler(t)
	if resp := get(h, "GET", "/events"); resp.StatusCode != http.StatusNotFound {
		t.Errorf("GET /events of the embedded rules: %d, want 404", resp.StatusCode)
	}
	if doc, _ := rulesJSON(t, h); doc.Live {
		t.Errorf("rules.json of the embedded rules says live")
	}
}

// Close ends the streams, so a server's Shutdown does not wait for them.
func TestCloseEndsStreams(t *testing.T) {
	h, err := playground.New(playground.Options{Rules: ruletest.Rules(), Source: "rules", Live: true, Module: fakeModule})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(h)
	srv.Config.RegisterOnShutdown(h.Close)
	srv.Start()
	t.Cleanup(srv.Close)
	page := listen(t, srv.URL)
	var ann map[string]string
	page.next("rules", &ann)
	ctx, cancel := context.WithTimeout(context.Background(), testenv.Patience(t))
	defer cancel()
	start := time.Now()
	if err := srv.Config.Shutdown(ctx); err != nil {
		t.Fatalf("Shutdown with a page listening: %v after %v", err, time.Since(start))
	}
	select {
	case _, ok := <-page.ch:
		if ok {
			t.Fatalf("an event after Close")
		}
	case <-time.After(testenv.Patience(t)):
		t.Fatalf("the stream had not ended after Close when the test's time ran out")
	}
}

// A stream lives as long as its page, under a server whose write timeout
// (serve.Serve's is a minute) would cut any other response.
func TestStreamOutlivesWriteTimeout(t *testing.T) {
	h, err := playground.New(playground.Options{Rules: ruletest.Rules(), Source: "rules", Revision: "r1", Live: true, Module: fakeModule})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(h)
	srv.Config.WriteTimeout = 100 * time.Millisecond
	srv.Start()
	t.Cleanup(srv.Close)
	page := listen(t, srv.URL)
	var ann map[string]string
	page.next("rules", &ann)
	time.Sleep(300 * time.Millisecond)
	if err := h.Publish(ruletest.WithMarker(ruletest.Rules(), "nvfork"), "r2"); err != nil {
		t.Fatal(err)
	}
	page.next("rules", &ann)
	if ann["revision"] != "r2" {
		t.Fatalf("after the write timeout the page hears %v; want r2", ann)
	}
}
