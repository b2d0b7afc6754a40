package serve

import (
	"context"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dlroute/dlroute/internal/testkit/ruletest"
	"github.com/dlroute/dlroute/live"
)

// benchInputs are one input per row of JAX's table, as the engine's
// benchmarks cycle through.
var benchInputs = []string{
	`{"platform":"gpu","platform_version":"cuda 12030","local_hardware_id":0,"shards":2}`,
	`{"platform":"cpu","platform_version":"cpu","local_hardware_id":0}`,
	`{"platform":"gpu","platform_version":"cuda 12030","memory_kind":"pinned_host","local_hardware_id":1}`,
	`{"platform":"gpu","platform_version":"PJRT C API\ncuda 12030","local_hardware_id":0}`,
	`{"platform":"gpu","platform_version":"rocm 60200","memory_kind":"pinned_host","local_hardware_id":1}`,
	`{"platform":"gpu","platform_version":"rocm 60200","local_hardware_id":2}`,
	`{"platform":"gpu","platform_version":"oneapi 2026.0","local_hardware_id":0}`,
	`{"platform":"gpu","platform_version":"<unknown>","local_hardware_id":0}`,
	`{"platform":"gpu","platform_version":"cuda 12030","local_hardware_id":null}`,
	`{"platform":"tpu","platform_version":"PJRT C API\nTFRT TPU v2","memory_kind":"pinned_host","local_hardware_id":3}`,
	`{"platform":"tpu","platform_version":"PJRT C API\nTFRT TPU v2","memory_kind":"device","local_hardware_id":3}`,
	`{"platform":"METAL","platform_version":"metal","local_hardware_id":0}`,
}

// BenchmarkServe is a load generator against serve on loopback: a client
// per goroutine with keep-alive, 8 goroutines per CPU (b.SetParallelism),
// each request timed. It reports requests and decisions per second and the
// 50th and 99th percentile latency, and fails on any request that does not
// get a 200. "swapping" sub-benchmarks swap two versions of the rules in a
// loop under the load and report how long a swap (compile, test, swap)
// took.
func BenchmarkServe(b *testing.B) {
	var batch []string
	for i := range 100 {
		batch = append(batch, benchInputs[i%len(benchInputs)])
	}
	batchBody := "[" + strings.Join(batch, ",") + "]"
	single := func(i int) string { return benchInputs[i%len(benchInputs)] }
	hundred := func(int) string { return batchBody }
	b.Run("single", func(b *testing.B) { loadServe(b, single, 1, false, true) })
	b.Run("batch100", func(b *testing.B) { loadServe(b, hundred, 100, false, true) })
	b.Run("single-no-memo", func(b *testing.B) { loadServe(b, single, 1, false, false) })
	b.Run("batch100-no-memo", func(b *testing.B) { loadServe(b, hundred, 100, false, false) })
	b.Run("single-swapping", func(b *testing.B) { loadServe(b, single, 1, true, true) })
	b.Run("batch100-swapping", func(b *testing.B) { loadServe(b, hundred, 100, true, true) })
}

// loadServe runs the load; memo false serves without NativePrepare's
// memo of answers, as a control.
func loadServe(b *testing.B, body func(int) string, perRequest int, swapping, memo bool) {
	gate := live.Gate{Prepare: NativePrepare(0)}
	if !memo {
		gate = live.Gate{}
	}
	ts := newTestServerGate(b, live.Static("rules", ruletest.Rules()), gate, HandlerConfig{})
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 256}}
	versions := []*live.Candidate{
		{Origin: "a", Dir: ruletest.WithMarker(ruletest.Rules(), "forka")},
		{Origin: "b", Dir: ruletest.WithMarker(ruletest.Rules(), "forkb")},
	}
	var (
		mu        sync.Mutex
		latencies []time.Duration
		failed    atomic.Int64
		swaps     []time.Duration
	)
	stop := make(chan struct{})
	swapped := make(chan struct{})
	b.SetParallelism(8)
	b.ResetTimer()
	if swapping {
		go func() {
			defer close(swapped)
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				start := time.Now()
				if err := ts.rules.Offer(context.Background(), versions[i%2]); err != nil {
					b.Error(err)
					return
				}
				swaps = append(swaps, time.Since(start))
			}
		}()
	} else {
		close(swapped)
	}
	start := time.Now()
	b.RunParallel(func(pb *testing.PB) {
		local := make([]time.Duration, 0, 4096)
		for i := 0; pb.Next(); i++ {
			t0 := time.Now()
			resp, err := client.Post(ts.URL+"/v1/resolve", "application/json", strings.NewReader(body(i)))
			if err != nil {
				failed.Add(1)
				continue
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK || resp.Header.Get(RevisionHeader) == "" {
				failed.Add(1)
			}
			local = append(local, time.Since(t0))
		}
		mu.Lock()
		latencies = append(latencies, local...)
		mu.Unlock()
	})
	elapsed := time.Since(start)
	close(stop)
	<-swapped
	b.StopTimer()
	if n := failed.Load(); n > 0 {
		b.Fatalf("%d of %d requests failed", n, b.N)
	}
	slices.Sort(latencies)
	pct := func(p float64) float64 { return float64(latencies[int(p*float64(len(latencies)-1))].Microseconds()) }
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "req/s")
	b.ReportMetric(float64(b.N*perRequest)/elapsed.Seconds(), "decisions/s")
	b.ReportMetric(pct(0.50), "p50-µs")
	b.ReportMetric(pct(0.99), "p99-µs")
	if swapping {
		var total time.Duration
		for _, d := range swaps {
			total += d
		}
		if len(swaps) > 0 {
			b.ReportMetric(float64(len(swaps)), "swaps")
			b.ReportMetric(float64(total.Milliseconds())/float64(len(swaps)), "ms/swap")
		}
	}
	b.ReportMetric(0, "ns/op") // a request's time is p50/p99; ns/op would be wall time over b.N
}
