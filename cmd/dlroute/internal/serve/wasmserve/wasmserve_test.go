package wasmserve

import (
	"context"
	"encoding/json"
	"fmt"
	decisionwasm "github.com/dlroute/dlroute/wasm/decision"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dlroute/dlroute/cmd/dlroute/internal/serve"
	"github.com/dlroute/dlroute/engine"
	"github.com/dlroute/dlroute/internal/testkit/ruletest"
	"github.com/dlroute/dlroute/internal/testkit/testenv"
	"github.com/dlroute/dlroute/live"
	"github.com/dlroute/dlroute/wasmhost"
)

// decisionModule is the decision module, built from the checkout and
// compiled.
func decisionModule(t *testing.T) *wasmhost.DecisionModule {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the decision module")
	}
	data, err := decisionwasm.Bytes()
	if err != nil {
		t.Fatal(err)
	}
	m, err := wasmhost.CompileDecision(context.Background(), wasmhost.DecisionConfig{Module: data})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close(context.Background()) })
	return m
}

// TestWasmEngine serves through the decision module: every case of every
// version is answered byte for byte as natively, and a new version swaps
// in instances of its own.
func TestWasmEngine(t *testing.T) {
	m := decisionModule(t)
	nativeRules, err := live.Open(context.Background(), live.Config{Source: live.Static("rules", ruletest.Rules()), Gate: live.Gate{Prepare: serve.NativePrepare(0)}})
	if err != nil {
		t.Fatal(err)
	}
	defer nativeRules.Close()
	native := newServer(t, serve.HandlerConfig{Rules: nativeRules})
	rules, err := live.Open(context.Background(), live.Config{
		Source: live.Static("rules", ruletest.Rules()),
		Gate:   live.Gate{Prepare: Prepare(m)},
	})
	if err != nil {
		t.Fatalf("live.Open with the module: %v", err)
	}
	defer rules.Close()
	wasm := newServer(t, serve.HandlerConfig{Rules: rules, Engine: "wasm"})

	// Prepare keeps the default versions' instances, tested last.
	p := rules.Current().Attached().(*pool)
	var kept []string
	for _, i := range p.idle {
		kept = append(kept, i.v.ref)
	}
	if len(kept) != p.keep || !slices.Contains(kept, "jax@v3") || !slices.Contains(kept, "exchange@v2") {
		t.Errorf("after Prepare the pool keeps %v (keep %d); want %d instances, jax@v3's and exchange@v2's among them", kept, p.keep, p.keep)
	}

	cat, _ := engine.Load(ruletest.Rules(), engine.Options{})
	for _, rs := range cat.RuleSets() {
		var inputs []string
		for _, c := range rs.Cases() {
			inputs = append(inputs, inputJSON(t, c.Input))
		}
		// and lines the plan refuses: JSON that is not an input, a field
		// of the wrong type, one the version does not declare; and one
		// without platform_version, which no engine reads from the device
		body := "[" + strings.Join(append(inputs, `{"platform":7}`, `{"platform":"gpu","colour":"red"}`, `"gpu"`, `{"platform":"gpu","local_hardware_id":0}`), ",") + "]"
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
		t.Fatal("the new version shares the old one's instances")
	}
	if _, _, got := wasm.post(t, "", `{"platform":"gpu","platform_version":"nvfork 1.0","local_hardware_id":0}`); !strings.Contains(got, `"device_type":"kDLCUDA"`) {
		t.Errorf("after the swap, the module decided nvfork as %s", got)
	}
}

// TestPrepareRefusesWhatTheModuleDecidesOtherwise: a case the decision
// module decides otherwise than tests.yaml wants is a test_failure at
// the case's position, which refuses the candidate. (The engine and the
// plans agree on every shipped case, so the test loads another
// version's plan in jax@v3's place.)
func TestPrepareRefusesWhatTheModuleDecidesOtherwise(t *testing.T) {
	m := decisionModule(t)
	ctx := context.Background()
	s, err := (live.Gate{}).Admit(ctx, &live.Candidate{Origin: "rules", Dir: ruletest.Rules()})
	if err != nil {
		t.Fatal(err)
	}
	e := newPool(m, make(chan struct{}, 1), 1)
	defer e.Close()
	jax, _ := s.Catalog().RuleSet("jax@v3")
	other, _ := s.Catalog().RuleSet("exchange@v2")
	e.add(jax.Ref(), s.Plan(other.Ref()))
	err = e.test(ctx, []*engine.RuleSet{jax})
	list := engine.Errors(err)
	if len(list) == 0 || list[0].Code != engine.CodeTestFailure || list[0].Pos == nil || !strings.Contains(list[0].Pos.String(), "jax/v3/tests.yaml:") ||
		!strings.Contains(list[0].Message, "the decision module got") {
		t.Fatalf("test with exchange@v2's plan for jax@v3 = %v; want test_failure at a case of jax/v3/tests.yaml", err)
	}
}

// TestPoolKeepsWhatItNeeds: a version busy in every instance it has
// starts one more; given back, instances are kept idle up to the pool's
// keep, the least recently used closed past it, and a kept one decides.
func TestPoolKeepsWhatItNeeds(t *testing.T) {
	m := decisionModule(t)
	ctx := context.Background()
	s, err := (live.Gate{}).Admit(ctx, &live.Candidate{Origin: "rules", Dir: ruletest.Rules()})
	if err != nil {
		t.Fatal(err)
	}
	p := newPool(m, make(chan struct{}, 2), 2)
	defer p.Close()
	jax := p.add("jax@v3", s.Plan("jax@v3"))
	exchange := p.add("exchange@v2", s.Plan("exchange@v2"))
	var held []*wasmhost.Decider
	for range 3 {
		d, err := p.take(ctx, jax)
		if err != nil {
			t.Fatal(err)
		}
		held = append(held, d)
	}
	if held[0] == held[1] || held[1] == held[2] || held[0] == held[2] {
		t.Fatal("three taken at once share an instance")
	}
	for _, d := range held {
		p.put(jax, d, nil)
	}
	if len(p.idle) != 2 || p.idle[0].d != held[1] || p.idle[1].d != held[2] {
		t.Errorf("three given back to a pool that keeps 2: %d idle; want the last 2 given back", len(p.idle))
	}
	d, err := p.take(ctx, exchange)
	if err != nil {
		t.Fatal(err)
	}
	p.put(exchange, d, nil)
	if len(p.idle) != 2 || p.idle[0].d != held[2] || p.idle[1].d != d {
		t.Errorf("after exchange@v2's: %d idle; want jax@v3's most recent and exchange@v2's", len(p.idle))
	}
	line := []byte(`{"platform":"gpu","platform_version":"cuda 12030","local_hardware_id":0}`)
	if out, _, err := p.decide(ctx, jax, line); err != nil || !strings.Contains(string(out), `"kDLCUDA"`) {
		t.Errorf("a kept instance decides %s (%v); want kDLCUDA", out, err)
	}
}

// TestPoolDecidesConcurrently: many requests at once, over two
// versions and more goroutines than slots, each get the native engine's
// answer; afterwards the pool keeps no more than its keep. Run it with
// -race.
func TestPoolDecidesConcurrently(t *testing.T) {
	m := decisionModule(t)
	ctx := context.Background()
	s, err := (live.Gate{}).Admit(ctx, &live.Candidate{Origin: "rules", Dir: ruletest.Rules()})
	if err != nil {
		t.Fatal(err)
	}
	p := newPool(m, make(chan struct{}, 2), 3)
	defer p.Close()
	type job struct {
		v          *version
		line, want string
	}
	var jobs []job
	for _, ref := range []string{"jax@v3", "exchange@v2"} {
		rs, _ := s.Catalog().RuleSet(ref)
		v := p.add(ref, s.Plan(ref))
		for _, c := range rs.Cases() {
			line := inputJSON(t, c.Input)
			want, err := rs.ResolveJSON(ctx, []byte(line))
			if err != nil {
				continue // an error case: the engines' errors are TestWasmEngine's
			}
			jobs = append(jobs, job{v, line, string(want)})
		}
	}
	errs := make(chan string, 8*len(jobs))
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range jobs {
				j := jobs[(i+g*7)%len(jobs)]
				// straight to the pool, past the memo, so every call enters an instance
				out, _, err := p.decide(ctx, j.v, []byte(j.line))
				if err != nil || string(out) != j.want {
					errs <- fmt.Sprintf("%s %s: got %s (%v), want %s", j.v.ref, j.line, out, err, j.want)
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
	if len(p.idle) > p.keep {
		t.Errorf("after the requests the pool keeps %d idle instances; want at most %d", len(p.idle), p.keep)
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

// TestWasmBusyKeepsHealthz: under --engine wasm, the slowest decisions a
// version may hold (WithSlowRules: 10 rules near the CEL cost limit each,
// over a second a decision in the compiler module) are answered with the
// native engine's bytes: the decision module bounds a call by its plan's
// step limit and needs no deadline. While every slot is taken (as by
// Instances() such requests at once), /healthz and /v1/status answer,
// a request waits for a slot and answers canceled at its deadline, and
// once a slot is free requests are answered again.
func TestWasmBusyKeepsHealthz(t *testing.T) {
	m := decisionModule(t)
	ctx := context.Background()
	slow := ruletest.WithSlowRules(ruletest.Rules(), 10)
	nativeRules, err := live.Open(ctx, live.Config{Source: live.Static("rules", slow), Gate: live.Gate{Prepare: serve.NativePrepare(0)}})
	if err != nil {
		t.Fatal(err)
	}
	defer nativeRules.Close()
	native := newServer(t, serve.HandlerConfig{Rules: nativeRules})
	rules, err := live.Open(ctx, live.Config{Source: live.Static("rules", slow), Gate: live.Gate{Prepare: Prepare(m)}})
	if err != nil {
		t.Fatalf("live.Open with the module: %v", err)
	}
	defer rules.Close()
	const timeout = 500 * time.Millisecond
	srv := newServer(t, serve.HandlerConfig{Rules: rules, Engine: "wasm", Timeout: timeout})

	body := `{"platform":"` + ruletest.SlowPlatform + `","platform_version":"v"}`
	_, _, want := native.post(t, "", body)
	start := time.Now()
	if status, _, got := srv.post(t, "", body); status != http.StatusOK || got != want {
		t.Errorf("the slow rules: %d %s; want the native engine's %s", status, got, want)
	}
	t.Logf("the slow rules decided in the decision module in %v", time.Since(start))

	slots := rules.Current().Attached().(*pool).slots
	for range cap(slots) {
		slots <- struct{}{}
	}
	client := &http.Client{Timeout: testenv.Patience(t)}
	for _, path := range []string{"/healthz", "/v1/status"} {
		resp, err := client.Get(srv.URL + path)
		if err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("%s with every slot taken: %v, %v", path, resp, err)
		}
		resp.Body.Close()
	}
	cuda := `{"platform":"gpu","platform_version":"rocm 60200","local_hardware_id":1}`
	if status, _, got := srv.post(t, "", cuda); status != http.StatusInternalServerError || !strings.Contains(got, `"code":"canceled"`) {
		t.Errorf("a request with every slot taken: %d %s; want 500 canceled at its %v deadline", status, got, timeout)
	}
	for range cap(slots) {
		<-slots
	}
	if status, _, got := srv.post(t, "", cuda); status != http.StatusOK || !strings.Contains(got, `"device_type":"kDLROCM"`) {
		t.Errorf("with the slots free again: %d %s; want kDLROCM", status, got)
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
