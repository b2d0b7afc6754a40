package serve

import (
	"context"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/dlroute/dlroute/internal/ruletest"
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
	for _, path := range []string{"/healthz", "/v1/status"} {
		start := time.Now()
		status, body := srv.get(t, path)
		if took := time.Since(start); status != http.StatusOK || took > 100*time.Millisecond {
			t.Errorf("%s while a candidate is in the gate: %d after %v: %s; want 200 at once", path, status, took, body)
		}
	}
	close(release)
	if err := <-checked; err != nil {
		t.Fatal(err)
	}
}
