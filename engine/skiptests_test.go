package engine_test

import (
	"context"
	"testing"
	"testing/fstest"

	"github.com/dlroute/dlroute/engine"
	"github.com/dlroute/dlroute/internal/testkit/ruletest"
)

// TestSkipTests: a version compiled without its tests.yaml decides every
// case of it as the version compiled with it does, holds no cases, and
// loads with a broken tests.yaml; a later Load that wants the tests does
// not take it from Reuse.
func TestSkipTests(t *testing.T) {
	ctx := context.Background()
	whole := loadEmbedded(t, engine.Options{})
	broken := ruletest.Rules()
	broken["jax/v3/tests.yaml"] = &fstest.MapFile{Data: []byte("cases: [")}
	if _, err := engine.Load(broken, engine.Options{Select: []string{"exchange"}}); err == nil {
		t.Fatal("exchange, whose import jax@v3 has a broken tests.yaml, loads with its tests")
	}
	skipped, err := engine.Load(broken, engine.Options{Select: []string{"exchange"}, SkipTests: true})
	if err != nil {
		t.Fatalf("Load(SkipTests) with jax@v3's tests.yaml broken: %v", err)
	}
	for _, ref := range []string{"exchange@v2", "jax@v3"} {
		rs, want := ruleSet(t, skipped, ref), ruleSet(t, whole, ref)
		if n := len(rs.Cases()); n != 0 {
			t.Errorf("%s loaded with SkipTests holds %d cases", ref, n)
		}
		if n := len(rs.Test(ctx)); n != 0 {
			t.Errorf("%s loaded with SkipTests ran %d cases", ref, n)
		}
		for _, c := range want.Cases() {
			got, gotErr := rs.Resolve(ctx, c.Input)
			d, err := want.Resolve(ctx, c.Input)
			if !got.Equal(d) || (gotErr == nil) != (err == nil) {
				t.Errorf("%s %s: decided %v, %v without its tests; %v, %v with them", ref, c.Name, got, gotErr, d, err)
			}
		}
	}
	cat, err := engine.Load(ruletest.Rules(), engine.Options{Select: []string{"jax@v3"}, Reuse: skipped})
	if err != nil {
		t.Fatal(err)
	}
	if rs := ruleSet(t, cat, "jax@v3"); len(rs.Cases()) == 0 {
		t.Error("a Load with tests reused jax@v3 compiled without them")
	}
}

// TestSkipTestsReusesTested: a load that skips the tests takes a version
// compiled with them from Reuse, as it is.
func TestSkipTestsReusesTested(t *testing.T) {
	tested, err := engine.Load(ruletest.Rules(), engine.Options{Select: []string{"jax@v3"}})
	if err != nil {
		t.Fatal(err)
	}
	cat, err := engine.Load(ruletest.Rules(), engine.Options{Select: []string{"jax@v3"}, Reuse: tested, SkipTests: true})
	if err != nil {
		t.Fatal(err)
	}
	if ruleSet(t, cat, "jax@v3") != ruleSet(t, tested, "jax@v3") {
		t.Error("a load skipping the tests compiled jax@v3 again rather than reuse it with its tests")
	}
}
