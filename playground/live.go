package playground

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"sync"
	"time"

	"github.com/dlroute/dlroute/engine"
	"github.com/dlroute/dlroute/live"
)

// Live rules: `dlroute playground --rules DIR` puts every change of DIR
// through the gate every host uses (package live), and Publish makes each
// version that passes the page's rules.json. A page that is open listens
// to /events, a stream of server-sent events:
//
//	event: rules    data: {"revision": "...", "source": "..."}
//	event: refused  data: {"stage": "compile", "code": ..., "reason": ..., "errors": [...]}
//
// A new stream starts with the rules event of the rules served, then the
// refusal that came after them, if one did; so a page that connects late,
// or again after the server restarted, knows whether its rules.json is
// the one served. A rules event with the same revision also withdraws a
// refusal: the source went back to the rules served. Events carry no
// rules: the page fetches rules.json, which keeps one path for the first
// load and every later one.

// maxRefusalErrors bounds the errors a refused event lists.
const maxRefusalErrors = 20

// MaxEventStreams bounds the /events streams open at once on one
// Handler. Each holds a connection and a goroutine for as long as its page
// is open; beyond the bound a new stream is answered 503 with a
// Retry-After, and the streams open keep theirs. A person has a few pages
// open, so the bound is only reached by something that opens streams and
// keeps them.
const MaxEventStreams = 64

// eventsRetryAfter is the Retry-After, in seconds, of a stream refused
// at MaxEventStreams.
const eventsRetryAfter = "10"

// keepAlive is how often an idle event stream gets a comment, so that a
// proxy does not close it and a closed page is noticed.
const keepAlive = 25 * time.Second

// Publish makes fsys, a rules directory, the rules the page loads
// (rules.json, the plans.bin it names and first.json, and the interop.json decided from them when next asked
// for), named by revision, and tells every open page. Rules with
// no <name>/<version>/ files are an error, and the rules served stay.
func (h *Handler) Publish(fsys fs.FS, revision string) error {
	st := h.live.now()
	st.revision = revision
	rf, err := rulesJSON(fsys, st, h.decision)
	if err != nil {
		return err
	}
	r, err := newResource("rules.json", rf.rules, nil)
	if err != nil {
		return err
	}
	pf, err := newPlanFiles(rf)
	if err != nil {
		return err
	}
	// plans.bin before rules.json, which names it: a page told of the
	// new rules fetches the plans rules.json names.
	h.plans.Store(pf)
	// interop.json first: a page told of the new rules fetches both.
	h.interop.publish(fsys, st)
	h.live.update(func(s *rulesState) *resource {
		s.revision, s.refusal = revision, nil
		return r
	})
	return nil
}

// Refused tells every open page that a candidate was refused, and why.
// The rules served stay those last published.
func (h *Handler) Refused(ref *live.Refusal) {
	data, err := json.Marshal(refusalEvent{Refusal: ref, Errors: refusalErrors(ref)})
	if err != nil {
		data = []byte(fmt.Sprintf(`{"stage":%q,"reason":%q}`, ref.Stage, ref.Error()))
	}
	h.live.update(func(s *rulesState) *resource {
		s.refusal = data
		return nil
	})
}

// Observe is a live.Config.Observe: it publishes each activated snapshot
// and tells of each refusal.
func (h *Handler) Observe(e live.Event) {
	switch e.Outcome {
	case live.Activated:
		if err := h.Publish(e.Snapshot.FS(), e.Snapshot.Revision()); err != nil {
			h.Refused(&live.Refusal{At: e.At, Origin: e.Snapshot.Origin(), Stage: "publish", Code: "error", Reason: err.Error()})
		}
	case live.Refused:
		h.Refused(e.Refusal)
	case live.Unchanged:
		if e.Snapshot != nil { // the source is back to the rules served
			h.live.update(func(s *rulesState) *resource {
				s.refusal = nil
				return nil
			})
		}
	}
}

// Close ends every page's event stream and refuses new ones: call it when
// the server shuts down (http.Server.RegisterOnShutdown), since a stream
// is never idle and would hold the shutdown until its timeout.
func (h *Handler) Close() {
	h.live.update(func(s *rulesState) *resource {
		s.closed = true
		return nil
	})
}

// refusalEvent is a refused event's data: the refusal, and its engine
// errors with their positions, for the page to list.
type refusalEvent struct {
	*live.Refusal
	Errors []*engine.Error `json:"errors,omitempty"`
}

func refusalErrors(ref *live.Refusal) []*engine.Error {
	list := engine.Errors(ref)
	return list[:min(len(list), maxRefusalErrors)]
}

// rulesState is what the page is told: the rules served and the refusal
// since.
type rulesState struct {
	source, revision string
	live             bool
	refusal          []byte // the refused event's data; nil when none came after the rules
	closed           bool
}

// hub holds rules.json and the event streams that watch it. A stream is
// told only that something changed and then sends the state as it is, so
// a slow page never holds up Publish and never gets stale events.
type hub struct {
	mu       sync.Mutex
	state    rulesState
	resource *resource
	waiters  map[chan struct{}]struct{} // the open streams; at most MaxEventStreams
}

func newHub(st rulesState, r *resource) *hub {
	return &hub{state: st, resource: r, waiters: map[chan struct{}]struct{}{}}
}

func (hb *hub) rules() *resource {
	hb.mu.Lock()
	defer hb.mu.Unlock()
	return hb.resource
}

// update changes the state under the lock (and rules.json, when change
// returns a resource) and wakes every stream.
func (hb *hub) update(change func(*rulesState) *resource) {
	hb.mu.Lock()
	defer hb.mu.Unlock()
	if r := change(&hb.state); r != nil {
		hb.resource = r
	}
	for ch := range hb.waiters {
		select {
		case ch <- struct{}{}:
		default: // already woken
		}
	}
}

// watch has ch woken by every update, until unwatch, and reports
// whether it does: not when MaxEventStreams are watching already.
func (hb *hub) watch(ch chan struct{}) bool {
	hb.mu.Lock()
	defer hb.mu.Unlock()
	if len(hb.waiters) >= MaxEventStreams {
		return false
	}
	hb.waiters[ch] = struct{}{}
	return true
}

// now returns the state now.
func (hb *hub) now() rulesState {
	hb.mu.Lock()
	defer hb.mu.Unlock()
	return hb.state
}

func (hb *hub) unwatch(ch chan struct{}) {
	hb.mu.Lock()
	defer hb.mu.Unlock()
	delete(hb.waiters, ch)
}

// serveEvents streams the rules' events until the page goes away or the
// handler closes; at MaxEventStreams it refuses the stream.
func (hb *hub) serveEvents(w http.ResponseWriter, req *http.Request) {
	if st := hb.now(); !st.live || st.closed {
		http.Error(w, "these rules do not change: the playground serves no events", http.StatusNotFound)
		return
	}
	wake := make(chan struct{}, 1)
	if !hb.watch(wake) {
		w.Header().Set("Retry-After", eventsRetryAfter)
		http.Error(w, fmt.Sprintf("the playground has %d event streams open, its limit: close a page, or try again in %s s", MaxEventStreams, eventsRetryAfter), http.StatusServiceUnavailable)
		return
	}
	defer hb.unwatch(wake)
	st := hb.now() // again after watch, so that no update is missed
	rc := http.NewResponseController(w)
	// A stream lasts as long as the page: a server's write timeout, which
	// bounds a whole response, must not cut it.
	if err := rc.SetWriteDeadline(time.Time{}); err != nil && !errors.Is(err, http.ErrNotSupported) {
		return
	}
	hdr := w.Header()
	hdr.Set("Content-Type", "text/event-stream")
	hdr.Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
	fmt.Fprint(w, "retry: 1000\n\n") // reconnect after a second once the server is back
	var sentRevision string
	var sentRefusal []byte
	first := true
	ping := time.NewTicker(keepAlive)
	defer ping.Stop()
	for {
		if st.closed {
			return
		}
		// The rules again after a refusal withdrawn: the source is back
		// to the rules served.
		if first || st.revision != sentRevision || (sentRefusal != nil && st.refusal == nil) {
			data, _ := json.Marshal(map[string]string{"revision": st.revision, "source": st.source})
			writeEvent(w, "rules", data)
			sentRevision, sentRefusal, first = st.revision, nil, false
		}
		if st.refusal != nil && string(st.refusal) != string(sentRefusal) {
			writeEvent(w, "refused", st.refusal)
			sentRefusal = st.refusal
		}
		if err := rc.Flush(); err != nil {
			return
		}
		select {
		case <-req.Context().Done():
			return
		case <-ping.C:
			fmt.Fprint(w, ": keep-alive\n\n")
		case <-wake:
		}
		st = hb.now()
	}
}

// writeEvent writes one server-sent event; data is JSON as encoding/json
// writes it, on one line.
func writeEvent(w http.ResponseWriter, event string, data []byte) {
	fmt.Fprintf(w, "event: %s\ndata: %s\n\n", event, data)
}
