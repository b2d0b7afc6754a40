package serve

import (
	"context"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/dlroute/dlroute/internal/testkit/ruletest"
	"github.com/dlroute/dlroute/internal/testkit/testenv"
	"github.com/dlroute/dlroute/live"
)

// TestHealthDoesNotWaitOnAGate: while a candidate is in the gate (its
// tests, its preparation: rule evaluation under the rules' own lock),
// /healthz and /v1/status answer at once from the rules in force.
func TestHealthDoesNotWaitOnAGate(t *testing.T) {
	entered, release := make(chan struct{}), make(chan struct{})
	prepare := func(ctx context.Context, s *live.Snapshot) (io.Closer, error) {
		select {
		case entered <- struct{}{}: // the test waits for the second candidate only
			<-release // whose preparation hangs until the probes are done
		default:
		}
		return NativePrepare(0)(ctx, s)
	}
	srv := newTestServerGate(t, live.Static("rules", ruletest.Rules()), live.Gate{Prepare: prepare}, HandlerConfig{})
	checked := make(chan error, 1)
	go func() {
		checked <- srv.rules.Offer(context.Background(), &live.Candidate{Origin: "next", Dir: ruletest.WithMarker(ruletest.Rules(), "nvfork")})
	}()
	<-entered
	// The preparation hangs until the probes are done: a probe that
	// waited on the gate would never be answered.
	for _, path := range []string{"/healthz", "/v1/status"} {
		type answer struct {
			resp *http.Response
			err  error
		}
		answered := make(chan answer, 1)
		go func() {
			resp, err := http.Get(srv.URL + path)
			answered <- answer{resp, err}
		}()
		select {
		case a := <-answered:
			if a.err != nil {
				t.Fatalf("%s while a candidate is in the gate: %v", path, a.err)
			}
			body, _ := io.ReadAll(a.resp.Body)
			a.resp.Body.Close()
			if a.resp.StatusCode != http.StatusOK {
				t.Errorf("%s while a candidate is in the gate: %d %s; want 200", path, a.resp.StatusCode, body)
			}
		case <-time.After(testenv.Patience(t)):
			t.Fatalf("%s was not answered while a candidate was in the gate: it waits on the gate", path)
		}
	}
	close(release)
	if err := <-checked; err != nil {
		t.Fatal(err)
	}
}
