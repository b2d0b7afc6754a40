package serve

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dlroute/dlroute/internal/testkit/ruletest"
	"github.com/dlroute/dlroute/live"
)

// faultyStore serves a bundle, or a fault.
type faultyStore struct {
	mu    sync.Mutex
	body  []byte
	fault string // "", "500", "hang", "huge"
}

func (s *faultyStore) set(body []byte, fault string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.body, s.fault = body, fault
}

func (s *faultyStore) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	body, fault := s.body, s.fault
	s.mu.Unlock()
	switch fault {
	case "500":
		http.Error(w, "upstream unavailable", http.StatusInternalServerError)
	case "hang":
		<-r.Context().Done()
	case "huge": // 1 GB without a Content-Length
		chunk := make([]byte, 1<<20)
		for range 1024 {
			if _, err := w.Write(chunk); err != nil {
				return
			}
		}
	default:
		w.Write(body)
	}
}

// TestFaultsKeepServing breaks the bundle server, and the bundle, each way
// the issue lists, under a steady load of requests: each fault is refused
// with its reason in /v1/status, the log and /metrics, and every request
// is answered by the last good version.
func TestFaultsKeepServing(t *testing.T) {
	t.Parallel() // it waits out an upstream timeout; the package's other parallel tests run meanwhile
	good := archive(t, ruletest.WithMarker(ruletest.Rules(), "nvfork"))
	store := &faultyStore{}
	store.set(good, "")
	upstream := httptest.NewServer(store)
	defer upstream.Close()
	src, _ := live.HTTP(upstream.URL+"/rules.tar.gz", live.HTTPOptions{Timeout: 3 * time.Second, MaxSize: 1 << 20})
	ts := newTestServer(t, src, HandlerConfig{})
	rev := ts.rules.Current().Revision()

	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	var requests, failures atomic.Int64
	wg.Add(1)
	go func() {
		defer wg.Done()
		for ctx.Err() == nil {
			resp, err := http.Post(ts.URL+"/v1/resolve", "application/json", strings.NewReader(`{"platform":"gpu","platform_version":"nvfork 1.0","local_hardware_id":0}`))
			requests.Add(1)
			if err != nil {
				failures.Add(1)
				continue
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 200 || resp.Header.Get(RevisionHeader) != rev || !bytes.Contains(body, []byte(`"device_type":"kDLCUDA"`)) {
				failures.Add(1)
			}
		}
	}()

	changed, _ := ruletest.SetMember(good, "jax/v3/rules.yaml", bytes.Replace(ruletest.WithMarker(ruletest.Rules(), "nvfork")["jax/v3/rules.yaml"].Data, []byte("nvfork"), []byte("nvfake"), 1))
	escaping, _ := ruletest.SetMember(good, "jax/v3/../../../tmp/x", []byte("x"))
	faults := []struct {
		name, fault string
		body        []byte
		stage, code string
	}{
		{"an HTTP 500", "500", nil, "fetch", "http_status"},
		{"a timeout", "hang", nil, "fetch", "timeout"},
		{"a 1 GB body", "huge", nil, "fetch", "too_long"},
		{"a truncated archive", "", good[:len(good)/2], "verify", "truncated"},
		{"a digest that does not match", "", changed, "verify", "digest_mismatch"},
		{"a path that escapes", "", escaping, "verify", "bad_path"},
		{"a failing test", "", archive(t, ruletest.WithCase(ruletest.WithMarker(ruletest.Rules(), "nvfork"), "otherfork")), "test", "test_failure"},
	}
	for i, f := range faults {
		store.set(f.body, f.fault)
		err := ts.rules.Check(context.Background())
		if err == nil {
			t.Fatalf("%s: Check accepted it", f.name)
		}
		st := ts.status(t)
		if r := st.LastRefusal; r == nil || string(r.Stage) != f.stage || string(r.Code) != f.code || st.Active.Revision != rev {
			t.Errorf("%s: /v1/status last refusal %+v, active %s; want %s %s, %s", f.name, r, st.Active.Revision, f.stage, f.code, rev)
		}
		if log := ts.log.String(); !strings.Contains(log, `msg="rules refused"`) || !strings.Contains(log, "code="+f.code) {
			t.Errorf("%s: the log does not say so:\n%s", f.name, log)
		}
		_, metrics := ts.get(t, "/metrics")
		if want := `dlroute_rules_refusals_total{code="` + f.code + `",stage="` + f.stage + `"} 1`; !strings.Contains(metrics, want) {
			t.Errorf("%s: /metrics lacks %s", f.name, want)
		}
		if want := `dlroute_rules_checks_total{outcome="refused"} ` + string(rune('1'+i)); !strings.Contains(metrics, want) {
			t.Errorf("%s: /metrics lacks %s", f.name, want)
		}
	}
	cancel()
	wg.Wait()
	if failures.Load() != 0 || requests.Load() == 0 {
		t.Errorf("%d of %d requests failed during the faults; want none of at least one", failures.Load(), requests.Load())
	}
}
