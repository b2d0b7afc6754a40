package wasmserve

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/dlroute/dlroute/engine"
	"github.com/dlroute/dlroute/internal/ruletest"
	"github.com/dlroute/dlroute/internal/serve"
	"github.com/dlroute/dlroute/internal/testenv"
	"github.com/dlroute/dlroute/internal/wasmbuild"
	"github.com/dlroute/dlroute/live"
	"github.com/dlroute/dlroute/wasmhost"
)

// TestWasmEngine serves through the module: every case of every version
// is answered byte for byte as natively, and a new version swaps in a
// runner of its own.
func TestWasmEngine(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the WebAssembly module")
	}
	module, _, err := wasmbuild.Module(context.Background(), wasmbuild.Options{})
	if err != nil {
		t.Fatal(err)
	}
	nativeRules, err := live.Open(context.Background(), live.Config{Source: live.Static("rules", ruletest.Rules()), Gate: live.Gate{Prepare: serve.NativePrepare(0)}})
	if err != nil {
		t.Fatal(err)
	}
	defer nativeRules.Close()
	native := newServer(t, serve.HandlerConfig{Rules: nativeRules})
	compiled, err := wasmhost.Compile(context.Background(), wasmhost.RunnerConfig{Module: module})
	if err != nil {
		t.Fatal(err)
	}
	defer compiled.Close(context.Background())
	rules, err := live.Open(context.Background(), live.Config{
		Source: live.Static("rules", ruletest.Rules()),
		Gate:   live.Gate{Prepare: Prepare(compiled)},
	})
	if err != nil {
		t.Fatalf("live.Open with the module: %v", err)
	}
	defer rules.Close()
	wasm := newServer(t, serve.HandlerConfig{Rules: rules, Engine: "wasm"})

	cat, _ := engine.Load(ruletest.Rules(), engine.Options{})
	for _, rs := range cat.RuleSets() {
		var inputs []string
		for _, c := range rs.Cases() {
			inputs = append(inputs, inputJSON(t, c.Input))
		}
		body := "[" + strings.Join(inputs, ",") + "]"
		_, _, want := native.post(t, "?ruleset="+rs.Ref(), body)
		_, _, got := wasm.post(t, "?ruleset="+rs.Ref(), body)
		if got != want {
			t.Errorf("%s: the module answered\n%s\nnatively\n%s", rs.Ref(), got, want)
		}
	}

	old := rules.Current()
	if err := rules.Offer(context.Background(), &live.Candidate{Origin: "b", Dir: ruletest.WithMarker(ruletest.Rules(), "nvfork")}); err != nil {
		t.Fatalf("Offer: %v", err)
	}
	if rules.Current().Attached() == old.Attached() {
		t.Fatal("the new version shares the old one's runner")
	}
	if _, _, got := wasm.post(t, "", `{"platform":"gpu","platform_version":"nvfork 1.0","local_hardware_id":0}`); !strings.Contains(got, `"device_type":"kDLCUDA"`) {
		t.Errorf("after the swap, the module decided nvfork as %s", got)
	}
}

func inputJSON(t *testing.T, in engine.Input) string {
	t.Helper()
	b, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestWasmAttackKeepsHealthz: under --engine wasm, as many requests as
// the pool has instances (Instances, as serve runs it), each keeping its guest busy for seconds, end at
// the request's deadline with canceled; /healthz and /v1/status answer
// while every instance is held (they wait on none: how soon they answer
// is the machine's, logged here, measured in BENCHMARKS.md); and a normal
// request after them is answered correctly by the instances started in
// the stopped ones' place.
func TestWasmAttackKeepsHealthz(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the WebAssembly module")
	}
	ctx := context.Background()
	module, _, err := wasmbuild.Module(ctx, wasmbuild.Options{})
	if err != nil {
		t.Fatal(err)
	}
	instances := Instances()
	compiled, err := wasmhost.Compile(ctx, wasmhost.RunnerConfig{Module: module, Instances: instances})
	if err != nil {
		t.Fatal(err)
	}
	defer compiled.Close(ctx)
	// 10 rules of about 130 ms each in the guest, as many as
	// engine.MaxDecisionCost lets a version hold: over a second a
	// request, if nothing stops it.
	rules, err := live.Open(ctx, live.Config{
		Source: live.Static("rules", ruletest.WithSlowRules(ruletest.Rules(), 10)),
		Gate:   live.Gate{Prepare: Prepare(compiled)},
	})
	if err != nil {
		t.Fatalf("live.Open with the module: %v", err)
	}
	defer rules.Close()
	const timeout = 500 * time.Millisecond
	srv := newServer(t, serve.HandlerConfig{Rules: rules, Engine: "wasm", Timeout: timeout})

	client := &http.Client{Timeout: testenv.Patience(t)}
	probe := func(path string) time.Duration {
		start := time.Now()
		resp, err := client.Get(srv.URL + path)
		took := time.Since(start)
		if err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("%s: %v, %v", path, resp, err)
		}
		resp.Body.Close()
		return took
	}
	paths := []string{"/healthz", "/v1/status"}
	// The control, for the log: the same probes with no attack.
	var control time.Duration
	for i := range 10 {
		control = max(control, probe(paths[i%2]))
		time.Sleep(20 * time.Millisecond)
	}

	type attack struct {
		status int
		body   string
		took   time.Duration
	}
	attacks := make(chan attack, instances)
	for range instances {
		go func() {
			start := time.Now()
			status, _, body := srv.post(t, "", `{"platform":"`+ruletest.SlowPlatform+`","platform_version":"v"}`)
			attacks <- attack{status, body, time.Since(start)}
		}()
	}
	var worst time.Duration
	var worstPath string
	probes, during := 0, 0
	for done := 0; done < instances; {
		select {
		case a := <-attacks:
			done++
			// canceled is the deadline's doing (the guest runs over a second);
			// how soon after it is the machine's.
			if a.status != http.StatusInternalServerError || !strings.Contains(a.body, `"code":"canceled"`) {
				t.Errorf("an attack got %d after %v: %s; want 500 canceled at its %v deadline", a.status, a.took, a.body, timeout)
			}
		case <-time.After(20 * time.Millisecond):
			path := paths[probes%2]
			probes++
			if took := probe(path); took > worst {
				worst, worstPath = took, path
			}
			// Answered while an attack still held its instance: not every
			// attack has come back, here or in the channel.
			if done+len(attacks) < instances {
				during++
			}
		}
	}
	t.Logf("during the attack, %d probes (%d answered while an instance was held), the slowest %v (%s); with none, the slowest of 10 took %v", probes, during, worst, worstPath, control)
	if during == 0 {
		t.Errorf("no probe of /healthz or /v1/status was answered while the attacks held the instances (%d probes, the slowest %s, %v): they wait on the instances", probes, worstPath, worst)
	}
	// The stopped instances are replaced off the request path, which
	// takes a guest seconds (loading the rules, compiling jax@v3); until
	// then a request waits for an instance, and past its deadline answers
	// canceled.
	replaced := time.Now().Add(testenv.Patience(t))
	for {
		status, _, body := srv.post(t, "", `{"platform":"gpu","platform_version":"rocm 60200","local_hardware_id":1}`)
		if status == http.StatusOK && strings.Contains(body, `"device_type":"kDLROCM"`) {
			break
		}
		if time.Now().After(replaced) || !strings.Contains(body, `"code":"canceled"`) {
			t.Fatalf("after the attack: %d %s; want kDLROCM once the instances are replaced", status, body)
		}
	}
}

// server is serve's handler on an httptest server.
type server struct{ *httptest.Server }

func newServer(t testing.TB, cfg serve.HandlerConfig) *server {
	t.Helper()
	srv := &server{httptest.NewServer(serve.NewHandler(cfg))}
	t.Cleanup(srv.Close)
	return srv
}

// post sends body to /v1/resolve with query q.
func (s *server) post(t testing.TB, q, body string) (int, http.Header, string) {
	t.Helper()
	resp, err := http.Post(s.URL+"/v1/resolve"+q, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, string(out)
}
