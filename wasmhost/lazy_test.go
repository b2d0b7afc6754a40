package wasmhost

import (
	"context"
	"errors"
	"testing"
	"testing/fstest"

	"github.com/dlroute/dlroute/engine"
	"github.com/dlroute/dlroute/internal/testkit/ruletest"
)

// LoadLazy compiles only what RuleSet asks for, in every instance: a
// broken version no one asks for is not an error, the one asked for is
// the module's ErrorList with its position, and a pool of instances
// (Prewarm, then concurrent calls) decides as one. Load of the same rules
// refuses them.
func TestLoadLazy(t *testing.T) {
	needModule(t)
	ctx := context.Background()
	broken := ruletest.Rules()
	broken["jax/v1/rules.yaml"] = &fstest.MapFile{Data: []byte("rules: [")}
	r, err := NewRunner(ctx, RunnerConfig{Module: module, Instances: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close(ctx)
	if err := r.Load(ctx, broken); err == nil {
		t.Fatal("Load of rules with jax@v1 broken succeeded")
	}
	if err := r.LoadLazy(ctx, broken); err != nil {
		t.Fatalf("LoadLazy: %v", err)
	}
	rs, err := r.RuleSet(ctx, "exchange")
	if err != nil {
		t.Fatalf("RuleSet(exchange) with jax@v1 broken: %v", err)
	}
	if err := r.Prewarm(ctx); err != nil {
		t.Fatalf("Prewarm: %v", err)
	}
	seed := []byte(`{"platform":"gpu","platform_version":"<unknown>","local_hardware_id":0,"max_version":[1,1]}`)
	done := make(chan string, 4)
	for range cap(done) {
		go func() {
			out, err := rs.ResolveJSON(ctx, seed)
			if err != nil {
				done <- err.Error()
				return
			}
			done <- string(out)
		}()
	}
	native, err := engine.Load(ruletest.Rules(), engine.Options{Select: []string{"exchange"}})
	if err != nil {
		t.Fatal(err)
	}
	nrs, _ := native.RuleSet("exchange")
	want, _ := nrs.ResolveJSON(ctx, seed)
	for range cap(done) {
		if got := <-done; got != string(want) {
			t.Errorf("the seed's line through the pool: %s; natively %s", got, want)
		}
	}
	_, err = r.RuleSet(ctx, "jax@v1")
	var list engine.ErrorList
	if !errors.As(err, &list) || len(list) == 0 || list[0].Pos == nil || list[0].Pos.File != "rules/jax/v1/rules.yaml" || list[0].Pos.Line != 1 {
		t.Errorf("RuleSet(jax@v1), broken: %v; want its load error at rules/jax/v1/rules.yaml:1", err)
	}
}
