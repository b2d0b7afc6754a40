package serve

import (
	"context"
	"encoding/json"
	"io"
	"io/fs"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/dlroute/dlroute/bundle"
	"github.com/dlroute/dlroute/internal/testkit/ruletest"
	"github.com/dlroute/dlroute/internal/testkit/testenv"
	"github.com/dlroute/dlroute/live"
)

// testServer is a handler over live rules on an httptest server, with its
// log in a buffer.
type testServer struct {
	*httptest.Server
	rules   *live.Rules
	metrics *Metrics
	log     *testenv.Buffer
}

func newTestServer(t testing.TB, src live.Source, cfg HandlerConfig) *testServer {
	t.Helper()
	return newTestServerGate(t, src, live.Gate{Prepare: NativePrepare(0)}, cfg)
}

// newTestServerGate is newTestServer with a gate of the test's.
func newTestServerGate(t testing.TB, src live.Source, gate live.Gate, cfg HandlerConfig) *testServer {
	t.Helper()
	ts := &testServer{metrics: NewMetrics(), log: &testenv.Buffer{}}
	log := slog.New(slog.NewTextHandler(ts.log, nil))
	rules, err := live.Open(context.Background(), live.Config{Source: src, Gate: gate, Observe: func(e live.Event) { logEvent(log, e); ts.metrics.Observe(e) }})
	if err != nil {
		t.Fatalf("live.Open: %v", err)
	}
	ts.rules = rules
	t.Cleanup(func() { rules.Close() })
	cfg.Rules, cfg.Metrics, cfg.Log = rules, ts.metrics, log
	ts.Server = httptest.NewServer(NewHandler(cfg))
	t.Cleanup(ts.Close)
	return ts
}

// post sends body to /v1/resolve with query q.
func (ts *testServer) post(t testing.TB, q, body string) (int, http.Header, string) {
	t.Helper()
	resp, err := http.Post(ts.URL+"/v1/resolve"+q, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, string(out)
}

func (ts *testServer) get(t testing.TB, path string) (int, string) {
	t.Helper()
	resp, err := http.Get(ts.URL + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(out)
}

// status is /v1/status, decoded.
func (ts *testServer) status(t testing.TB) live.Status {
	t.Helper()
	_, body := ts.get(t, "/v1/status")
	var st live.Status
	if err := json.Unmarshal([]byte(body), &st); err != nil {
		t.Fatalf("/v1/status: %v: %s", err, body)
	}
	return st
}

// archive packs fsys into an unsigned bundle.
func archive(t testing.TB, fsys fs.FS) []byte {
	t.Helper()
	data, _, err := ruletest.Bundle(fsys, bundle.BuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return data
}
