package serve

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dlroute/dlroute/internal/testkit/ruletest"
	"github.com/dlroute/dlroute/internal/testkit/testenv"
	"github.com/dlroute/dlroute/live"
)

// served is what the load checks of a decision.
type served struct {
	DeviceType string          `json:"device_type"`
	Error      json.RawMessage `json:"error"`
	RuleSet    string          `json:"ruleset"`
	Revision   string          `json:"revision"`
}

// TestSwapUnderLoad swaps versions of the rules, and offers broken ones,
// while clients send single inputs and batches of 100: no request fails,
// and every request is answered whole by the one revision its header
// names. Run it with -race.
func TestSwapUnderLoad(t *testing.T) {
	t.Parallel() // CPU-bound, beside TestFaultsKeepServing's wait
	ts := newTestServer(t, live.Static("rules", ruletest.Rules()), HandlerConfig{})
	const versions = 5
	marker := func(i int) string { return fmt.Sprintf("fork%c", 'a'+i) }
	markerOf := map[string]string{ts.rules.Current().Revision(): ""} // by revision
	archives := make([][]byte, versions)
	for i := range archives {
		archives[i] = archive(t, ruletest.WithMarker(ruletest.Rules(), marker(i)))
		b, _ := live.Gate{}.Admit(context.Background(), &live.Candidate{Origin: "x", Archive: archives[i]})
		markerOf[b.Revision()] = marker(i)
	}
	inputOf := func(m string) string {
		return `{"platform":"gpu","platform_version":"` + m + ` 1.0","local_hardware_id":0}`
	}
	var batch []string
	for i := range 100 {
		batch = append(batch, inputOf(marker(i%versions)))
	}
	batchBody := "[" + strings.Join(batch, ",") + "]"

	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 8}}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	var requests, failures atomic.Int64
	var lastSeen atomic.Value // the revision of the latest answer
	fail := func(format string, args ...any) {
		if failures.Add(1) <= 5 {
			t.Errorf(format, args...)
		}
	}
	// check is one decision of input marker m, answered by revision rev.
	check := func(a served, rev, m string) {
		known := a.DeviceType == "kDLCUDA"
		if a.Revision != rev || known != (markerOf[rev] == m) {
			fail("revision %s (marker %q) answered %q with %+v", rev, markerOf[rev], m, a)
		}
	}
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ctx.Err() == nil; i++ {
				m, body := marker((g+i)%versions), batchBody
				if g%2 == 0 {
					body = inputOf(m)
				}
				resp, err := client.Post(ts.URL+"/v1/resolve", "application/json", strings.NewReader(body))
				if err != nil {
					fail("request failed: %v", err)
					continue
				}
				out, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				requests.Add(1)
				rev := resp.Header.Get(RevisionHeader)
				if resp.StatusCode != 200 {
					fail("status %d: %s", resp.StatusCode, out)
					continue
				}
				lastSeen.Store(rev)
				if g%2 == 0 {
					var a served
					json.Unmarshal(out, &a)
					check(a, rev, m)
					continue
				}
				var as []served
				json.Unmarshal(out, &as)
				if len(as) != 100 {
					fail("a batch of 100 got %d answers", len(as))
				}
				for j, a := range as {
					check(a, rev, marker(j%versions))
				}
			}
		}()
	}

	for i, data := range archives {
		if err := ts.rules.Offer(context.Background(), &live.Candidate{Origin: fmt.Sprint("v", i), Archive: data}); err != nil {
			t.Fatalf("Offer(v%d): %v", i, err)
		}
		rev := ts.rules.Current().Revision()
		// A broken version in between is refused and changes nothing.
		if err := ts.rules.Offer(context.Background(), &live.Candidate{Origin: "broken", Dir: ruletest.WithTypo(ruletest.Rules())}); err == nil {
			t.Fatal("Offer(broken) was accepted")
		}
		// Wait until the load has been answered by this version.
		deadline := time.Now().Add(testenv.Patience(t))
		for lastSeen.Load() != rev && time.Now().Before(deadline) {
			time.Sleep(time.Millisecond)
		}
		if lastSeen.Load() != rev {
			t.Fatalf("no request was answered by v%d", i)
		}
	}
	cancel()
	wg.Wait()
	if failures.Load() > 0 {
		t.Fatalf("%d of %d requests failed or were answered by a mixed version", failures.Load(), requests.Load())
	}
	st := ts.status(t)
	if st.Activations != versions+1 || st.Refusals != versions {
		t.Errorf("/v1/status: %d activations, %d refusals; want %d, %d", st.Activations, st.Refusals, versions+1, versions)
	}
	t.Logf("%d requests during %d swaps and %d refusals, none failed", requests.Load(), versions, versions)
}
