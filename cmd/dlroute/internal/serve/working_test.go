package serve

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/dlroute/dlroute/internal/testkit/ruletest"
	"github.com/dlroute/dlroute/internal/testkit/testenv"
	"github.com/dlroute/dlroute/live"
)

// workingServer is a handler's API and diagnostic address, each on an
// httptest server of its own, as Run serves them.
type workingServer struct {
	h         *handler
	api, diag *httptest.Server
}

func newWorkingServer(t *testing.T, cfg HandlerConfig) *workingServer {
	t.Helper()
	rules, err := live.Open(context.Background(), live.Config{Source: live.Static("rules", ruletest.Rules()), Gate: live.Gate{Prepare: NativePrepare(0)}})
	if err != nil {
		t.Fatalf("live.Open: %v", err)
	}
	t.Cleanup(func() { rules.Close() })
	cfg.Rules, cfg.Metrics, cfg.Log = rules, NewMetrics(), slog.New(slog.DiscardHandler)
	h := newHandler(cfg)
	cfg.Metrics.watch(h.budget)
	s := &workingServer{h: h, api: httptest.NewServer(h.api), diag: httptest.NewServer(h.diagnostic)}
	t.Cleanup(s.api.Close)
	t.Cleanup(s.diag.Close)
	return s
}

// holdAll takes every place of the handler's working, as requests that
// work would; the function returned gives one back.
func (s *workingServer) holdAll() (giveOne func()) {
	for range cap(s.h.working.places) {
		s.h.working.places <- struct{}{}
	}
	return func() { <-s.h.working.places }
}

type response struct {
	status int
	body   string
	err    error
}

// ask sends a request and reads the whole answer, giving up after the
// test's patience.
func ask(t *testing.T, method, url, body string) response {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testenv.Patience(t))
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return response{err: err}
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	return response{resp.StatusCode, string(out), err}
}

// TestWorkingHoldsItsLimit: with every place of MaxWorking taken, a
// request to /v1/resolve waits (dlroute_resolve_waiting says so) and is
// not answered; once a place is given back, it is answered 200.
func TestWorkingHoldsItsLimit(t *testing.T) {
	s := newWorkingServer(t, HandlerConfig{MaxWorking: 2})
	giveOne := s.holdAll()
	answered := make(chan response, 1)
	go func() { answered <- ask(t, http.MethodPost, s.api.URL+"/v1/resolve", cudaInput) }()
	waitUntil(t, "the request waits for its turn", func() bool { return gauge(s.h.m, "dlroute_resolve_waiting") == 1 })
	select {
	case r := <-answered:
		t.Fatalf("a request with both places of MaxWorking 2 taken was answered: %d %s %v; want it to wait", r.status, r.body, r.err)
	default:
	}
	giveOne()
	if r := <-answered; r.status != http.StatusOK || !strings.Contains(r.body, `"device_type":"kDLCUDA"`) {
		t.Fatalf("once a place was given back: %d %s %v; want 200, kDLCUDA", r.status, r.body, r.err)
	}
	if got := gauge(s.h.m, "dlroute_resolve_waiting"); got != 0 {
		t.Errorf("dlroute_resolve_waiting = %v once the request is answered; want 0", got)
	}
}

// TestDiagnosticAnswersWhileAPIWaits: with every place of MaxWorking
// taken and a request waiting for its turn, the diagnostic address
// answers /healthz, /v1/status and /metrics (which counts the waiting
// request), and nothing of the API.
func TestDiagnosticAnswersWhileAPIWaits(t *testing.T) {
	s := newWorkingServer(t, HandlerConfig{MaxWorking: 1})
	giveOne := s.holdAll()
	answered := make(chan response, 1)
	go func() { answered <- ask(t, http.MethodPost, s.api.URL+"/v1/resolve", cudaInput) }()
	waitUntil(t, "the request waits for its turn", func() bool { return gauge(s.h.m, "dlroute_resolve_waiting") == 1 })
	for _, c := range []struct{ method, path, want string }{
		{http.MethodGet, "/healthz", `"status":"ok"`},
		{http.MethodGet, "/v1/status", `"engine":"native"`},
		{http.MethodGet, "/metrics", "\ndlroute_resolve_waiting 1\n"},
	} {
		if r := ask(t, c.method, s.diag.URL+c.path, ""); r.status != http.StatusOK || !strings.Contains(r.body, c.want) {
			t.Errorf("%s %s on the diagnostic address, with the API's places all taken: %d %.300s %v; want 200 with %q", c.method, c.path, r.status, r.body, r.err, c.want)
		}
	}
	for _, c := range []struct{ method, path, body string }{{http.MethodPost, "/v1/resolve", cudaInput}, {http.MethodGet, "/v1/rules", ""}} {
		if r := ask(t, c.method, s.diag.URL+c.path, c.body); r.status != http.StatusNotFound {
			t.Errorf("%s %s on the diagnostic address: %d %.200s %v; want 404: it serves none of the API", c.method, c.path, r.status, r.body, r.err)
		}
	}
	giveOne()
	if r := <-answered; r.status != http.StatusOK {
		t.Fatalf("the waiting request, once a place was given back: %d %s %v; want 200", r.status, r.body, r.err)
	}
}

// TestSlowBodyHoldsNoPlace: a request whose body has not all arrived
// gives its place back while it waits for the rest, so that with
// MaxWorking 1 another request is answered meanwhile; a limit that slow
// clients held (as a limit on connections is held) would let them keep
// every request out.
func TestSlowBodyHoldsNoPlace(t *testing.T) {
	s := newWorkingServer(t, HandlerConfig{MaxWorking: 1})
	body, write := io.Pipe()
	t.Cleanup(func() { write.Close() }) // before the server's Close, which waits for the request
	slow := make(chan response, 1)
	go func() {
		req, _ := http.NewRequest(http.MethodPost, s.api.URL+"/v1/resolve", body)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			slow <- response{err: err}
			return
		}
		defer resp.Body.Close()
		out, _ := io.ReadAll(resp.Body)
		slow <- response{status: resp.StatusCode, body: string(out)}
	}()
	write.Write([]byte("[" + cudaInput + ","))
	waitUntil(t, "the slow request is read", func() bool { return gauge(s.h.m, "dlroute_request_body_bytes_in_flight") > 0 })

	if r := ask(t, http.MethodPost, s.api.URL+"/v1/resolve", cudaInput); r.status != http.StatusOK {
		t.Fatalf("a request beside a slow body, with MaxWorking 1: %d %s %v; want 200: the slow body holds the only place", r.status, r.body, r.err)
	}
	write.Write([]byte(cudaInput + "]"))
	write.Close()
	if r := <-slow; r.status != http.StatusOK || strings.Count(r.body, `"device_type":"kDLCUDA"`) != 2 {
		t.Fatalf("the slow request: %d %s %v; want 200, two decisions", r.status, r.body, r.err)
	}
}
