package wasmhost

import (
	"bytes"
	"context"
	"testing"

	"github.com/tetratelabs/wazero"

	"github.com/dlroute/dlroute/engine"
	"github.com/dlroute/dlroute/internal/testkit/ruletest"
)

// Runners started from one Module keep rules of their own; closing the
// Module leaves the open runners deciding, and the last one to close
// closes it, after which no runner starts.
func TestModuleRunnersShareTheCompiledCode(t *testing.T) {
	needModule(t)
	ctx := context.Background()
	m, err := Compile(ctx, RunnerConfig{Module: module, Instances: 2})
	if err != nil {
		t.Fatal(err)
	}
	start := func() *Runner {
		t.Helper()
		r, err := m.NewRunner(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	embedded, forked := start(), start()
	if err := embedded.Load(ctx, ruletest.Rules()); err != nil {
		t.Fatal(err)
	}
	fork := ruletest.Rules()
	fork["jax/v3/rules.yaml"].Data = bytes.Replace(fork["jax/v3/rules.yaml"].Data,
		[]byte("{marker: oneapi,"), []byte("{marker: nvfork, device: kDLCUDA}\n      - {marker: oneapi,"), 1)
	if err := forked.Load(ctx, fork); err != nil {
		t.Fatal(err)
	}
	in := engine.Input{"platform": "gpu", "platform_version": "nvfork 1.0", "local_hardware_id": int64(0)}
	decide := func(r *Runner) string {
		t.Helper()
		rs, err := r.RuleSet(ctx, "jax")
		if err != nil {
			t.Fatal(err)
		}
		d, err := rs.Resolve(ctx, in)
		if err != nil {
			t.Fatal(err)
		}
		return d.Rule
	}
	if a, b := decide(embedded), decide(forked); a != "gpu-unknown-platform" || b != "gpu" {
		t.Fatalf("the embedded rules decide %s, the fork's %s; want each runner its own rules", a, b)
	}

	if err := m.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := m.NewRunner(ctx); err == nil {
		t.Errorf("NewRunner after Close started a runner")
	}
	embedded.Close(ctx)
	if got := decide(forked); got != "gpu" {
		t.Fatalf("after the module and the other runner closed, the open runner decides %s", got)
	}
	forked.Close(ctx)
	forked.Close(ctx) // twice is once
	if _, err := m.rt.InstantiateModule(ctx, m.compiled, wazero.NewModuleConfig().WithName("").WithStartFunctions()); err == nil {
		t.Errorf("the runtime is still open after its last runner closed")
	}
}

// BenchmarkRunnerStart is what a new version of the rules costs a host
// that gives each its own runner (serve --engine wasm): "new-runner"
// compiles the module again (wazero's cache on disk warm), as each
// activation did; "from-module" starts a runner of a Module compiled
// once. Both then load the embedded rules into the runner's instance.
func BenchmarkRunnerStart(b *testing.B) {
	ctx := context.Background()
	cfg := RunnerConfig{Module: module, Instances: 1, CacheDir: b.TempDir()}
	m, err := Compile(ctx, cfg) // fills the cache on disk too
	if err != nil {
		b.Fatal(err)
	}
	defer m.Close(ctx)
	for _, c := range []struct {
		name  string
		start func() (*Runner, error)
	}{
		{"new-runner", func() (*Runner, error) { return NewRunner(ctx, cfg) }},
		{"from-module", func() (*Runner, error) { return m.NewRunner(ctx) }},
	} {
		b.Run(c.name, func(b *testing.B) { startAndLoad(b, c.start) })
	}
}
