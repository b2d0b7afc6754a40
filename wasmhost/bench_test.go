package wasmhost

import (
	"bytes"
	"compress/gzip"
	"context"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tetratelabs/wazero"

	"github.com/dlroute/dlroute/engine"
	"github.com/dlroute/dlroute/machine"
	"github.com/dlroute/dlroute/rules"
)

// benchInputs is one input per row of JAX's table, as in engine's
// benchmarks.
var benchInputs = []engine.Input{
	{"platform": "gpu", "platform_version": "cuda 12030", "local_hardware_id": 0, "shards": 2},
	{"platform": "cpu", "platform_version": "cpu", "local_hardware_id": 0},
	{"platform": "gpu", "platform_version": "cuda 12030", "memory_kind": "pinned_host", "local_hardware_id": 0},
	{"platform": "gpu", "platform_version": "PJRT C API\ncuda 12030", "memory_kind": "device", "local_hardware_id": 1},
	{"platform": "gpu", "platform_version": "rocm 60200", "memory_kind": "pinned_host", "local_hardware_id": 0},
	{"platform": "gpu", "platform_version": "rocm 60200", "local_hardware_id": 2},
	{"platform": "gpu", "platform_version": "oneapi 2026.0", "local_hardware_id": 0},
	{"platform": "gpu", "platform_version": "<unknown>", "local_hardware_id": 0},
	{"platform": "gpu", "platform_version": "cuda 12030", "local_hardware_id": nil},
	{"platform": "tpu", "platform_version": "PJRT C API\nTFRT TPU v2", "memory_kind": "pinned_host", "local_hardware_id": 0},
	{"platform": "tpu", "platform_version": "PJRT C API\nTFRT TPU v2", "memory_kind": "device", "local_hardware_id": 0},
	{"platform": "METAL", "platform_version": "PJRT C API\nmetal 1.0", "local_hardware_id": 0},
}

func benchRuleSet(b *testing.B, cfg RunnerConfig) *RuleSet {
	ctx := context.Background()
	cfg.Module = module
	r, err := NewRunner(ctx, cfg)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { r.Close(ctx) })
	if err := r.Load(ctx, rules.FS); err != nil {
		b.Fatal(err)
	}
	if err := r.Prewarm(ctx); err != nil {
		b.Fatal(err)
	}
	rs, err := r.RuleSet(ctx, "jax")
	if err != nil {
		b.Fatal(err)
	}
	return rs
}

// uniqueInput is an unknown GPU platform never seen before: a miss in
// every memo.
func uniqueInput(i int64) engine.Input {
	return engine.Input{"platform": "gpu", "platform_version": "fork " + strconv.FormatInt(i, 10), "local_hardware_id": 0}
}

// BenchmarkWasmResolve: "native" is engine.RuleSet.Resolve (memoised), the
// baseline; "warm" is the module with repeated inputs (answered by the
// host's memo); "guest-memo" turns the host memo off (each call enters the
// module, whose engine remembers); "miss" gives every call a new input
// (the module evaluates the rules each time); "native-miss" is the same
// natively.
func BenchmarkWasmResolve(b *testing.B) {
	ctx := context.Background()
	cat, err := engine.Load(rules.FS, engine.Options{})
	if err != nil {
		b.Fatal(err)
	}
	native, _ := cat.RuleSet("jax")
	b.Run("native", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			if _, err := native.Resolve(ctx, benchInputs[i%len(benchInputs)]); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("warm", func(b *testing.B) {
		rs := benchRuleSet(b, RunnerConfig{})
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			if _, err := rs.Resolve(ctx, benchInputs[i%len(benchInputs)]); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("guest-memo", func(b *testing.B) {
		rs := benchRuleSet(b, RunnerConfig{MemoSize: -1})
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			if _, err := rs.Resolve(ctx, benchInputs[i%len(benchInputs)]); err != nil {
				b.Fatal(err)
			}
		}
	})
	var n atomic.Int64
	b.Run("native-miss", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := native.Resolve(ctx, uniqueInput(n.Add(1))); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("miss", func(b *testing.B) {
		rs := benchRuleSet(b, RunnerConfig{MemoSize: -1})
		b.ReportAllocs()
		for b.Loop() {
			if _, err := rs.Resolve(ctx, uniqueInput(n.Add(1))); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkWasmResolveParallel runs resolves from GOMAXPROCS goroutines,
// one module instance each: run it with -cpu 1,2 and compare. "native-miss"
// is the native engine on the same inputs, the control: what this machine
// gives two goroutines of this kind of work.
func BenchmarkWasmResolveParallel(b *testing.B) {
	ctx := context.Background()
	cat, err := engine.Load(rules.FS, engine.Options{MemoSize: -1})
	if err != nil {
		b.Fatal(err)
	}
	native, _ := cat.RuleSet("jax")
	// Each goroutine counts on its own: a shared counter would be the
	// contended cache line that the benchmark measures.
	var goroutines atomic.Int64
	parallel := func(b *testing.B, resolve func(engine.Input) error, input func(g, i int64) engine.Input) {
		b.ResetTimer() // the runner's start is not what is measured
		b.RunParallel(func(pb *testing.PB) {
			g := goroutines.Add(1)
			for i := int64(0); pb.Next(); i++ {
				if err := resolve(input(g, i)); err != nil {
					b.Error(err)
					return
				}
			}
		})
	}
	unique := func(g, i int64) engine.Input { return uniqueInput(g<<40 | i) }
	repeated := func(g, i int64) engine.Input { return benchInputs[i%int64(len(benchInputs))] }
	wasm := func(rs *RuleSet) func(engine.Input) error {
		return func(in engine.Input) error { _, err := rs.Resolve(ctx, in); return err }
	}
	b.Run("native-miss", func(b *testing.B) {
		parallel(b, func(in engine.Input) error { _, err := native.Resolve(ctx, in); return err }, unique)
	})
	b.Run("warm", func(b *testing.B) { parallel(b, wasm(benchRuleSet(b, RunnerConfig{})), repeated) })
	b.Run("guest-memo", func(b *testing.B) { parallel(b, wasm(benchRuleSet(b, RunnerConfig{MemoSize: -1})), repeated) })
	b.Run("miss", func(b *testing.B) { parallel(b, wasm(benchRuleSet(b, RunnerConfig{MemoSize: -1})), unique) })
}

// turnedDown is the runner as it is against one whose guest cannot be
// stopped mid-call: what wazero's WithCloseOnContextDone, which the
// runner uses, costs (wasmhost/RATIONALE.md).
var turnedDown = []struct {
	name string
	cfg  RunnerConfig
}{
	{"as-is", RunnerConfig{MemoSize: -1}},
	{"uninterruptible", RunnerConfig{MemoSize: -1, uninterruptible: true}},
}

// BenchmarkTurnedDown measures turnedDown on a call of a trivial export
// and on a miss.
func BenchmarkTurnedDown(b *testing.B) {
	ctx := context.Background()
	var n atomic.Int64
	trivial := func(rs *RuleSet) func(*testing.B) {
		return func(b *testing.B) {
			rs.r.with(ctx, func(inst *instance) error {
				stack := make([]uint64, 1)
				for b.Loop() {
					if err := inst.fns["dlroute_abi_version"].CallWithStack(ctx, stack); err != nil {
						b.Fatal(err)
					}
				}
				return nil
			})
		}
	}
	miss := func(rs *RuleSet) func(*testing.B) {
		return func(b *testing.B) {
			for b.Loop() {
				if _, err := rs.Resolve(ctx, uniqueInput(n.Add(1))); err != nil {
					b.Fatal(err)
				}
			}
		}
	}
	for _, c := range turnedDown {
		b.Run(c.name, func(b *testing.B) {
			rs := benchRuleSet(b, c.cfg)
			b.Run("trivial-export", trivial(rs))
			b.Run("miss", miss(rs))
		})
	}
}

// BenchmarkGuestLoad measures turnedDown on a load of every shipped rule
// set into a new runner, the compiler module's largest call (run it with
// -benchtime 1x: it takes seconds).
func BenchmarkGuestLoad(b *testing.B) {
	ctx := context.Background()
	for _, c := range turnedDown {
		b.Run(c.name, func(b *testing.B) {
			cfg := c.cfg
			cfg.Module, cfg.Instances = module, 1
			m, err := Compile(ctx, cfg) // outside the loop: a first compile takes seconds too
			if err != nil {
				b.Fatal(err)
			}
			defer m.Close(ctx)
			startAndLoad(b, func() (*Runner, error) { return m.NewRunner(ctx) })
		})
	}
}

// startAndLoad starts a runner and loads every shipped rule set into it,
// once per iteration.
func startAndLoad(b *testing.B, start func() (*Runner, error)) {
	ctx := context.Background()
	for b.Loop() {
		r, err := start()
		if err != nil {
			b.Fatal(err)
		}
		if err := r.Load(ctx, rules.FS); err != nil {
			b.Fatal(err)
		}
		r.Close(ctx)
	}
}

// BenchmarkCompile is wazero compiling the module: "warm" from the
// compilation cache on disk, as every start after the first; "cold" into an
// empty cache (run it with -benchtime 1x). It also reports the module's
// size, gzipped, and an instance's memory after the rules are loaded.
func BenchmarkCompile(b *testing.B) {
	ctx := context.Background()
	var gz bytes.Buffer
	w, _ := gzip.NewWriterLevel(&gz, gzip.BestCompression)
	w.Write(module)
	w.Close()
	compile := func(b *testing.B, dir string) {
		cache, err := wazero.NewCompilationCacheWithDir(dir)
		if err != nil {
			b.Fatal(err)
		}
		rt := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfig().WithCompilationCache(cache))
		defer rt.Close(ctx)
		if _, err := rt.CompileModule(ctx, module); err != nil {
			b.Fatal(err)
		}
	}
	b.Run("cold", func(b *testing.B) {
		for b.Loop() {
			compile(b, b.TempDir())
		}
	})
	b.Run("warm", func(b *testing.B) {
		dir := b.TempDir()
		compile(b, dir)
		for b.Loop() {
			compile(b, dir)
		}
		b.ReportMetric(float64(len(module)), "module-B")
		b.ReportMetric(float64(gz.Len()), "gzip-B")
	})
	b.Run("instance", func(b *testing.B) {
		rs := benchRuleSet(b, RunnerConfig{})
		var pages uint32
		for b.Loop() {
			rs.r.with(ctx, func(inst *instance) error {
				pages = inst.mod.Memory().Size()
				return nil
			})
		}
		b.ReportMetric(float64(pages), "memory-B/instance")
	})
}

// BenchmarkExchange carries out an exchange of a 4 KiB buffer: "copy" is
// the seed's unknown platform, copied into host memory; "in-place" is
// CUDA memory with no request. "native" decides with engine.RuleSet
// (memoised) and carries out with CarryOut; "wasm" is RuleSet.Exchange:
// the module decides (its engine memoised, no host memo: an exchange has
// an effect) and asks the host to copy through copy_to_host. Both copy
// with machine.HostCopier.
func BenchmarkExchange(b *testing.B) {
	ctx := context.Background()
	data := testArray()
	src := machine.Buffer{DeviceType: machine.DeviceCPU, Data: data, Size: int64(len(data))}
	native := nativeExchanger(b, "exchange", machine.HostCopier{})
	wasmRuleSet, err := benchRuleSet(b, RunnerConfig{Host: Host{Copier: machine.HostCopier{}}}).r.RuleSet(ctx, "exchange")
	if err != nil {
		b.Fatal(err)
	}
	wasm := wasmRuleSet.Exchange
	for _, c := range []struct{ name, line string }{{"copy", seedLine}, {"in-place", cudaLine}} {
		for _, e := range []struct {
			name     string
			exchange exchanger
		}{{"native", native}, {"wasm", wasm}} {
			b.Run(c.name+"/"+e.name, func(b *testing.B) {
				b.SetBytes(int64(len(data)))
				b.ReportAllocs()
				for b.Loop() {
					res, err := e.exchange(ctx, []byte(c.line), src)
					if err != nil || res.Buffer == nil {
						b.Fatal(res, err)
					}
				}
			})
		}
	}
}

// BenchmarkLoadLazyEveryVersion hands a runner the embedded rules as a
// host of them does (LoadLazy), then asks for every shipped version in
// turn, and reports the first five compiles and the last five: each
// compile selects again every version compiled before it (the guest's
// compile), so a host that asks for many versions pays more for each
// (run it with -benchtime 1x: it takes most of a minute).
func BenchmarkLoadLazyEveryVersion(b *testing.B) {
	ctx := context.Background()
	cat, err := engine.Load(rules.FS, engine.Options{SkipTests: true})
	if err != nil {
		b.Fatal(err)
	}
	sets := cat.RuleSets()
	for b.Loop() {
		r, err := NewRunner(ctx, RunnerConfig{Module: module, Instances: 1})
		if err != nil {
			b.Fatal(err)
		}
		if err := r.LoadLazy(ctx, rules.FS); err != nil {
			b.Fatal(err)
		}
		var first, last time.Duration
		for i, rs := range sets {
			start := time.Now()
			if _, err := r.RuleSet(ctx, rs.Ref()); err != nil {
				b.Fatal(err)
			}
			if took := time.Since(start); i < 5 {
				first += took
			} else if i >= len(sets)-5 {
				last += took
			}
		}
		r.Close(ctx)
		b.ReportMetric(first.Seconds(), "first-5-s")
		b.ReportMetric(last.Seconds(), "last-5-s")
	}
}
