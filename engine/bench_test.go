package engine_test

import (
	"context"
	"strconv"
	"testing"

	"github.com/dlroute/dlroute/engine"
	"github.com/dlroute/dlroute/rules"
)

// benchInputs is one input per row of JAX's table (ArrayImpl.__dlpack_device__ in jax/_src/array.py), in
// the form a Go host passes them.
var benchInputs = []engine.Input{
	{"platform": "gpu", "platform_version": "cuda 12030", "local_hardware_id": 0, "shards": 2},                               // 0
	{"platform": "cpu", "platform_version": "cpu", "local_hardware_id": 0},                                                   // 1
	{"platform": "gpu", "platform_version": "cuda 12030", "memory_kind": "pinned_host", "local_hardware_id": 0},              // 2
	{"platform": "gpu", "platform_version": "PJRT C API\ncuda 12030", "memory_kind": "device", "local_hardware_id": 1},       // 3
	{"platform": "gpu", "platform_version": "rocm 60200", "memory_kind": "pinned_host", "local_hardware_id": 0},              // 4
	{"platform": "gpu", "platform_version": "rocm 60200", "local_hardware_id": 2},                                            // 5
	{"platform": "gpu", "platform_version": "oneapi 2026.0", "local_hardware_id": 0},                                         // 6
	{"platform": "gpu", "platform_version": "<unknown>", "local_hardware_id": 0},                                             // 7
	{"platform": "gpu", "platform_version": "cuda 12030", "local_hardware_id": nil},                                          // 8
	{"platform": "tpu", "platform_version": "PJRT C API\nTFRT TPU v2", "memory_kind": "pinned_host", "local_hardware_id": 0}, // 9
	{"platform": "tpu", "platform_version": "PJRT C API\nTFRT TPU v2", "memory_kind": "device", "local_hardware_id": 0},      // 10
	{"platform": "METAL", "platform_version": "PJRT C API\nmetal 1.0", "local_hardware_id": 0},                               // 11
}

// BenchmarkResolve compares the engine with the floor: a hand-written Go
// function of the same table over the same inputs. "rules" is the engine as
// hosts use it (memoised); "rules-uncached" evaluates the CEL every time.
func BenchmarkResolve(b *testing.B) {
	ctx := context.Background()
	b.Run("switch", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			if _, err := jaxSwitch(benchInputs[i%len(benchInputs)]); err != nil {
				b.Fatal(err)
			}
		}
	})
	for _, bc := range []struct {
		name string
		memo int
	}{{"rules", 0}, {"rules-uncached", -1}} {
		if bc.name == "rules" {
			defer b.Run("rules-unique", benchUnique)
		}
		cat, err := engine.Load(rules.FS, engine.Options{MemoSize: bc.memo})
		if err != nil {
			b.Fatal(err)
		}
		rs, _ := cat.RuleSet("jax@v3")
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				if _, err := rs.Resolve(ctx, benchInputs[i%len(benchInputs)]); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// benchUnique is the memoised engine fed a new input every time, as an
// attacker would: every call is a miss and a Put into a full memo.
func benchUnique(b *testing.B) {
	cat, err := engine.Load(rules.FS, engine.Options{})
	if err != nil {
		b.Fatal(err)
	}
	rs, _ := cat.RuleSet("jax@v3")
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		in := engine.Input{"platform": "gpu", "platform_version": "fork " + strconv.Itoa(i), "local_hardware_id": 0}
		if _, err := rs.Resolve(context.Background(), in); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkLoad is the start-up cost: parse, type-check and plan every
// embedded rule-set version.
func BenchmarkLoad(b *testing.B) {
	b.Run("cold", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := engine.Load(rules.FS, engine.Options{}); err != nil {
				b.Fatal(err)
			}
		}
	})
	// cached: every file and expression met before, as a process that
	// loads the same rules again finds them (the command line's second
	// load, a live source that did not change).
	b.Run("cached", func(b *testing.B) {
		cache := engine.NewCache()
		if _, err := engine.Load(rules.FS, engine.Options{Cache: cache}); err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		for b.Loop() {
			if _, err := engine.Load(rules.FS, engine.Options{Cache: cache}); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// TestSwitchAgreesWithRules keeps the benchmark's floor honest: it must
// decide every bench input as the rules do.
func TestSwitchAgreesWithRules(t *testing.T) {
	rs := ruleSet(t, loadEmbedded(t, engine.Options{}), "jax@v3")
	for _, in := range benchInputs {
		want, err := rs.Resolve(context.Background(), in)
		if err != nil {
			t.Fatal(err)
		}
		got, err := jaxSwitch(in)
		if err != nil || !got.Equal(want) {
			t.Errorf("jaxSwitch(%v) = %v, %v; rules say %v", in, got, err, want)
		}
	}
}

// BenchmarkExchange is the exchange rule set, which imports jax@v3, over
// the inputs of its own tests: "rules" memoised as hosts use it,
// "rules-uncached" with every memo off (the exchange's and the import's),
// and Explain, which evaluates every value of both and bypasses the memo.
func BenchmarkExchange(b *testing.B) {
	ctx := context.Background()
	for _, bc := range []struct {
		name    string
		memo    int
		explain bool
	}{{"rules", 0, false}, {"rules-uncached", -1, false}, {"explain", 0, true}} {
		cat, err := engine.Load(rules.FS, engine.Options{MemoSize: bc.memo})
		if err != nil {
			b.Fatal(err)
		}
		rs, _ := cat.RuleSet("exchange@v2")
		var inputs []engine.Input
		for _, c := range rs.Cases() {
			inputs = append(inputs, c.Input)
		}
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				in := inputs[i%len(inputs)]
				var err error
				if bc.explain {
					_, err = rs.Explain(ctx, in)
				} else {
					_, err = rs.Resolve(ctx, in)
				}
				if err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
