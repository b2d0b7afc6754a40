package serve

import (
	"context"
	"github.com/dlroute/dlroute/cmd/dlroute/internal/httpserve"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/dlroute/dlroute/internal/testkit/ruletest"
	"github.com/dlroute/dlroute/internal/testkit/testenv"
	"github.com/dlroute/dlroute/live"
)

// TestShutdownFinishesInFlight starts a request, begins a shutdown while
// the request's body is still arriving, and checks the request is answered
// in full, no new connection is accepted, and Serve returns nil.
func TestShutdownFinishesInFlight(t *testing.T) {
	rules, err := live.Open(context.Background(), live.Config{Source: live.Static("rules", ruletest.Rules())})
	if err != nil {
		t.Fatal(err)
	}
	defer rules.Close()
	metrics := NewMetrics()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() {
		served <- httpserve.Serve(ctx, ln, NewHandler(HandlerConfig{Rules: rules, Metrics: metrics}), slog.New(slog.DiscardHandler))
	}()

	// Half a batch, then wait until the handler is reading it.
	body, write := io.Pipe()
	answered := make(chan *http.Response, 1)
	go func() {
		resp, err := http.Post("http://"+ln.Addr().String()+"/v1/resolve", "application/json", body)
		if err != nil {
			t.Errorf("the request in flight failed: %v", err)
		}
		answered <- resp
	}()
	write.Write([]byte("[" + cudaInput + ","))
	waitUntil(t, "the request is in flight", func() bool { return gauge(metrics, "dlroute_resolve_in_flight") == 1 })

	stop()
	waitUntil(t, "the listener is closed", func() bool {
		c, err := net.Dial("tcp", ln.Addr().String())
		if err == nil {
			c.Close()
		}
		return err != nil
	})
	write.Write([]byte(unknownInput + "]"))
	write.Close()
	resp := <-answered
	if resp == nil {
		t.FailNow()
	}
	out, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || strings.Count(string(out), `"revision"`) != 2 {
		t.Errorf("the request in flight got %d %s; want 200 and two decisions", resp.StatusCode, out)
	}
	if err := <-served; err != nil {
		t.Errorf("Serve returned %v, want nil", err)
	}
}

// waitUntil polls cond until it holds, or fails the test when its time
// runs out (testenv.Patience).
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(testenv.Patience(t))
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting until %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

// gauge reads a gauge from the metrics' registry.
func gauge(m *Metrics, name string) float64 {
	families, _ := m.Registry.Gather()
	for _, f := range families {
		if f.GetName() == name && len(f.Metric) == 1 {
			return f.Metric[0].GetGauge().GetValue()
		}
	}
	return -1
}
