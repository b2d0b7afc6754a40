package engine_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/dlroute/dlroute/engine"
	"github.com/dlroute/dlroute/rules"
)

// embeddedCache is shared by the tests that need the embedded rules
// loaded rather than a test of loading them: each takes the YAML and
// programs the first made (engine.Cache gives back what a fresh Load
// makes; TestCacheAgreesWithLoadFromNothing holds it to that).
var embeddedCache = engine.NewCache()

// loadEmbedded loads the embedded rules, through embeddedCache unless opts
// names a Cache.
func loadEmbedded(t testing.TB, opts engine.Options) *engine.Catalog {
	t.Helper()
	if opts.Cache == nil {
		opts.Cache = embeddedCache
	}
	cat, err := engine.Load(rules.FS, opts)
	if err != nil {
		t.Fatal(err)
	}
	return cat
}

func ruleSet(t testing.TB, cat *engine.Catalog, ref string) *engine.RuleSet {
	t.Helper()
	rs, err := cat.RuleSet(ref)
	if err != nil {
		t.Fatal(err)
	}
	return rs
}

// TestEmbeddedCases runs every case of every embedded version: what
// `dlroute test` does, as Go subtests.
func TestEmbeddedCases(t *testing.T) {
	cat := loadEmbedded(t, engine.Options{})
	n := 0
	for _, rs := range cat.RuleSets() {
		for _, c := range rs.Cases() {
			n++
			t.Run(rs.Ref()+"/"+c.Name, func(t *testing.T) {
				d, err := rs.Resolve(context.Background(), c.Input)
				if err != nil || !c.Want.Matches(d) {
					t.Errorf("%s: Resolve(%v) got %v (err %v), want %v", c.Pos, c.Input, d, err, c.Want)
				}
			})
		}
	}
	if n < 100 {
		t.Errorf("only %d cases in the embedded rules; every row of every version should have one", n)
	}
}

// TestEveryRowHasACase: the newest jax version's tests reach every rule.
func TestEveryRowHasACase(t *testing.T) {
	for _, rs := range loadEmbedded(t, engine.Options{}).RuleSets() {
		reached := map[string]bool{}
		for _, r := range rs.Test(context.Background()) {
			reached[r.Got.Rule] = true
		}
		for _, id := range rs.RuleIDs() {
			if !reached[id] {
				t.Errorf("%s: no test case reaches rule %s", rs.Ref(), id)
			}
		}
	}
}

func TestResolveChecksInputs(t *testing.T) {
	rs := ruleSet(t, loadEmbedded(t, engine.Options{}), "jax@v3")
	tests := []struct {
		name string
		in   engine.Input
		code engine.Code
	}{
		{"missing platform", engine.Input{"platform_version": "cuda 12030"}, engine.CodeMissingField},
		{"misspelt field", engine.Input{"platform": "gpu", "platform_verison": "cuda"}, engine.CodeUnknownField},
		{"extra field", engine.Input{"platform": "gpu", "platform_version": "cuda", "color": "red"}, engine.CodeUnknownField},
		{"int as string", engine.Input{"platform": "gpu", "platform_version": "cuda", "local_hardware_id": "0"}, engine.CodeWrongType},
		{"fractional id", engine.Input{"platform": "gpu", "platform_version": "cuda", "local_hardware_id": 0.5}, engine.CodeWrongType},
		{"null platform", engine.Input{"platform": nil, "platform_version": "cuda"}, engine.CodeWrongType},
		{"null shards", engine.Input{"platform": "gpu", "platform_version": "cuda", "shards": nil}, engine.CodeWrongType},
		{"long version", engine.Input{"platform": "gpu", "platform_version": strings.Repeat("x", engine.MaxStringLen+1)}, engine.CodeTooLong},
		{"invalid UTF-8", engine.Input{"platform": "gpu", "platform_version": "cuda \xff"}, engine.CodeInvalidUTF8},
	}
	for _, tt := range tests {
		d, err := rs.Resolve(context.Background(), tt.in)
		if !hasCode(err, tt.code) {
			t.Errorf("%s: Resolve(%v) = %v, %v; want error %s", tt.name, tt.in, d, err, tt.code)
		}
	}
}

// TestResolveAcceptsNumbersAsHostsSendThem: Go ints, JSON numbers and the
// float64 of JavaScript and generic decoders are the same int.
func TestResolveAcceptsNumbersAsHostsSendThem(t *testing.T) {
	rs := ruleSet(t, loadEmbedded(t, engine.Options{}), "jax@v3")
	for _, id := range []any{7, int64(7), uint8(7), float64(7), json.Number("7")} {
		d, err := rs.Resolve(context.Background(), engine.Input{"platform": "gpu", "platform_version": "rocm 60200", "local_hardware_id": id})
		if err != nil || d.DeviceType != "kDLROCM" || d.DeviceID != 7 {
			t.Errorf("Resolve with local_hardware_id %#v = %v, %v; want kDLROCM 7", id, d, err)
		}
	}
}

func TestDecodeInput(t *testing.T) {
	rs := ruleSet(t, loadEmbedded(t, engine.Options{}), "jax@v3")
	tests := []struct {
		line string
		code engine.Code // "" for a valid input
	}{
		{`{"platform":"gpu","platform_version":"cuda 12030","memory_kind":"device","local_hardware_id":0,"shards":1}`, ""},
		{`{"platform":"gpu","platform_version":"cuda 12030","local_hardware_id":null}`, ""},
		{`{"platform":"gpu","platform_version":"cuda","local_hardware_id":9007199254740993}`, ""},
		{`{"platform":"gpu","platform_version":"cuda","local_hardware_id":1e400}`, engine.CodeWrongType},
		{`{"platform":"gpu"`, engine.CodeJSON},
		{`["gpu"]`, engine.CodeJSON},
		{``, engine.CodeJSON},
		{`{"platform":"gpu","platform_version":"cuda"} {}`, engine.CodeJSON},
		{"{\"platform\":\"gpu\",\"platform_version\":\"cuda \xc3\x28\"}", engine.CodeInvalidUTF8},
		{`{"platform":"gpu","platform_version":"cuda","local_hardware_id":"0"}`, engine.CodeWrongType},
		{`{"platform":"gpu","platform_version":"cuda","shard":2}`, engine.CodeUnknownField},
		{`{"platform":"gpu","platform_version":"cuda","platform":"cpu"}`, engine.CodeJSON},
	}
	for _, tt := range tests {
		_, err := rs.DecodeInput([]byte(tt.line))
		switch {
		case tt.code == "" && err != nil:
			t.Errorf("DecodeInput(%s) error %v, want none", tt.line, err)
		case tt.code != "" && !hasCode(err, tt.code):
			t.Errorf("DecodeInput(%s) error %v, want %s", tt.line, err, tt.code)
		}
	}
}

// TestDecodeInputKeepsLargeIDs: an id above 2^53 is not rounded through float64.
func TestDecodeInputKeepsLargeIDs(t *testing.T) {
	rs := ruleSet(t, loadEmbedded(t, engine.Options{}), "jax@v3")
	in, err := rs.DecodeInput([]byte(`{"platform":"gpu","platform_version":"cuda","local_hardware_id":9007199254740993}`))
	if err != nil {
		t.Fatal(err)
	}
	d, err := rs.Resolve(context.Background(), in)
	if err != nil || d.DeviceID != 9007199254740993 {
		t.Fatalf("Resolve = %v, %v; want device id 9007199254740993", d, err)
	}
}

func TestResolveCostLimit(t *testing.T) {
	rs := ruleSet(t, loadEmbedded(t, engine.Options{CostLimit: 1}), "jax@v3")
	_, err := rs.Resolve(context.Background(), engine.Input{"platform": "gpu", "platform_version": "cuda 12030", "local_hardware_id": 0})
	if !hasCode(err, engine.CodeCostLimit) {
		t.Fatalf("Resolve with CostLimit 1: %v, want %s", err, engine.CodeCostLimit)
	}
	if e := engine.Errors(err)[0]; e.Pos == nil || !strings.HasSuffix(e.Pos.File, "rules.yaml") {
		t.Errorf("cost limit error does not point into rules.yaml: %v", e)
	}
}

func TestResolveCanceled(t *testing.T) {
	rs := ruleSet(t, loadEmbedded(t, engine.Options{MemoSize: -1}), "jax@v3")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := rs.Resolve(ctx, engine.Input{"platform": "gpu", "platform_version": "cuda 12030", "local_hardware_id": 0})
	if !hasCode(err, engine.CodeCanceled) {
		t.Fatalf("Resolve with a canceled context: %v, want %s", err, engine.CodeCanceled)
	}
}

// TestResolveConcurrently shares one RuleSet, with a memo small enough to
// evict all the time, between goroutines; run it with -race. Every decision
// must equal the one a memo-less rule set gives.
func TestResolveConcurrently(t *testing.T) {
	shared := ruleSet(t, loadEmbedded(t, engine.Options{MemoSize: 8}), "jax@v3")
	plain := ruleSet(t, loadEmbedded(t, engine.Options{MemoSize: -1}), "jax@v3")
	var inputs []engine.Input
	for i := range 64 {
		versions := []string{"cuda 12030", "rocm 60200", "oneapi 2026.0", "<unknown>", fmt.Sprintf("fork %d", i)}
		inputs = append(inputs, engine.Input{
			"platform": []string{"gpu", "cpu", "tpu", "METAL"}[i%4], "platform_version": versions[i%len(versions)],
			"memory_kind": []string{"device", "pinned_host"}[i%2], "local_hardware_id": []any{nil, i}[i%3%2],
		})
	}
	want := make([]engine.Decision, len(inputs))
	for i, in := range inputs {
		var err error
		if want[i], err = plain.Resolve(context.Background(), in); err != nil {
			t.Fatal(err)
		}
	}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for k := range 400 {
				i := (g*31 + k) % len(inputs)
				got, err := shared.Resolve(context.Background(), inputs[i])
				if err != nil || !got.Equal(want[i]) {
					t.Errorf("Resolve(%v) got %v (%v), want %v", inputs[i], got, err, want[i])
					return
				}
			}
		})
	}
	wg.Wait()
}

func TestDecisionJSON(t *testing.T) {
	rs := ruleSet(t, loadEmbedded(t, engine.Options{}), "jax@v3")
	tests := []struct {
		in   engine.Input
		want string
	}{
		{engine.Input{"platform": "gpu", "platform_version": "cuda 12030", "memory_kind": "device", "local_hardware_id": 0, "shards": 1},
			`{"device_type":"kDLCUDA","device_type_code":2,"device_id":0,"rule":"gpu","ruleset":"jax@v3"}`},
		{engine.Input{"platform": "gpu", "platform_version": "<unknown>"},
			`{"error":{"type":"BufferError","message":"Unknown GPU platform for __dlpack__: <unknown>"},"rule":"gpu-unknown-platform","ruleset":"jax@v3"}`},
	}
	for _, tt := range tests {
		d, err := rs.Resolve(context.Background(), tt.in)
		if err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		err = enc.Encode(d)
		b := bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
		if err != nil || string(b) != tt.want {
			t.Errorf("json.Marshal(Resolve(%v)) = %s, want %s", tt.in, b, tt.want)
		}
		var back engine.Decision
		if err := json.Unmarshal(b, &back); err != nil || !back.Equal(d) {
			t.Errorf("Decision does not survive JSON: %v -> %v (%v)", d, back, err)
		}
	}
}

// TestResolveStopsExpensiveRules: an expression whose worst case the
// static estimate cannot bound runs under the cost tracker, and is stopped
// when an input makes it expensive, while cheap inputs still decide.
func TestResolveStopsExpensiveRules(t *testing.T) {
	fsys := versionFS(t, "v3")
	edit(t, fsys, "jax/v3/rules.yaml", "  - id: sharded\n", `  - id: quadratic
    when: >-
      platform == 'slow' && platform_version.split('').all(a,
        platform_version.split('').all(b, a != 'z' || b != 'z'))
    device: {type: kDLCPU, id: 0}
  - id: sharded
`)
	cat, err := engine.Load(fsys, engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	rs := ruleSet(t, cat, "jax@v3")
	d, err := rs.Resolve(context.Background(), engine.Input{"platform": "slow", "platform_version": "abc"})
	if err != nil || d.Rule != "quadratic" {
		t.Fatalf("a short input: Resolve = %v, %v; want rule quadratic", d, err)
	}
	_, err = rs.Resolve(context.Background(), engine.Input{"platform": "slow", "platform_version": strings.Repeat("a", engine.MaxStringLen)})
	if !hasCode(err, engine.CodeCostLimit) {
		t.Fatalf("a %d-byte input: Resolve error %v, want %s", engine.MaxStringLen, err, engine.CodeCostLimit)
	}
}
