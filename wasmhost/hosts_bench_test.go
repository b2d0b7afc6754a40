package wasmhost

import (
	"context"
	"io/fs"
	"strconv"
	"testing"

	"github.com/dlroute/dlroute/engine"
	"github.com/dlroute/dlroute/rules"
)

// BenchmarkGoHost is the Go host's side of wasm/node/bench.mjs, which runs
// it beside the Node.js package's own figures in one script run
// (BENCHMARKS.md, "Node.js beside Go"), measured as the Node side is: one
// instance; "load" is a process's way to its first decision (compile, with
// wazero's cache warm; start an instance; load the embedded rules with
// LoadLazy; decide one line), "load-whole" the same with Load, which
// compiles every version first; then a JSON line decided again and again (the host's memo
// answers), a new line each call (the module decides), and an
// engine.Input by the binary entry (the memo again). "native-unique" is
// engine.RuleSet.ResolveJSON on the same new lines: the baseline of
// "resolve-json/unique" in the same run.
func BenchmarkGoHost(b *testing.B) {
	ctx := context.Background()
	line := []byte(`{"platform":"gpu","platform_version":"cuda 12030","local_hardware_id":0}`)
	for _, l := range []struct {
		name string
		load func(*Runner, context.Context, fs.FS) error
	}{{"load", (*Runner).LoadLazy}, {"load-whole", (*Runner).Load}} {
		b.Run(l.name, func(b *testing.B) {
			for b.Loop() {
				r, err := NewRunner(ctx, RunnerConfig{Module: module, Instances: 1})
				if err != nil {
					b.Fatal(err)
				}
				if err := l.load(r, ctx, rules.FS); err != nil {
					b.Fatal(err)
				}
				rs, err := r.RuleSet(ctx, "jax")
				if err != nil {
					b.Fatal(err)
				}
				if _, err := rs.ResolveJSON(ctx, line); err != nil {
					b.Fatal(err)
				}
				r.Close(ctx)
			}
		})
	}
	rs := benchRuleSet(b, RunnerConfig{Instances: 1})
	b.Run("resolve-json/repeated", func(b *testing.B) {
		for b.Loop() {
			if _, err := rs.ResolveJSON(ctx, line); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("resolve-json/unique", func(b *testing.B) {
		for i := 0; b.Loop(); i++ {
			unique := []byte(`{"platform":"gpu","platform_version":"fork ` + strconv.Itoa(i) + `","local_hardware_id":0}`)
			if _, err := rs.ResolveJSON(ctx, unique); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("resolve-json/native-unique", func(b *testing.B) {
		cat, err := engine.Load(rules.FS, engine.Options{})
		if err != nil {
			b.Fatal(err)
		}
		native, _ := cat.RuleSet("jax")
		for i := 0; b.Loop(); i++ {
			unique := []byte(`{"platform":"gpu","platform_version":"fork ` + strconv.Itoa(i) + `","local_hardware_id":0}`)
			if _, err := native.ResolveJSON(ctx, unique); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("resolve/repeated", func(b *testing.B) {
		in := benchInputs[3]
		for b.Loop() {
			if _, err := rs.Resolve(ctx, in); err != nil {
				b.Fatal(err)
			}
		}
	})
}
