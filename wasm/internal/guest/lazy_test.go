package guest

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/dlroute/dlroute/engine"
	"github.com/dlroute/dlroute/internal/contract"
	"github.com/dlroute/dlroute/internal/testkit/ruletest"
)

// lazyGuest returns a guest that loaded fsys with LoadLazy.
func lazyGuest(t *testing.T, fsys fstest.MapFS) *Guest {
	t.Helper()
	archive, err := contract.PackFS(fsys)
	if err != nil {
		t.Fatal(err)
	}
	g := New(Host{})
	if out, status := g.LoadLazy(archive); status != contract.StatusOK || string(out) != "[]" {
		t.Fatalf("LoadLazy: %s %s", status, out)
	}
	return g
}

// A version compiled on demand decides every case of its tests.yaml as
// the native engine does, byte for byte, through the JSON entry.
func TestGuestLoadLazyDecidesAsNative(t *testing.T) {
	cat, err := engine.Load(ruletest.Rules(), engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	g := lazyGuest(t, ruletest.Rules())
	for _, rs := range cat.RuleSets() {
		h, out, status := g.RuleSet(rs.Ref())
		if status != contract.StatusOK {
			t.Fatalf("RuleSet(%s): %s %s", rs.Ref(), status, out)
		}
		for _, c := range rs.Cases() {
			line, err := json.Marshal(c.Input)
			if err != nil {
				t.Fatal(err)
			}
			want, err := rs.ResolveJSON(context.Background(), line)
			got, status := g.ResolveJSON(context.Background(), h, line)
			if err != nil {
				if status == contract.StatusOK {
					t.Errorf("%s %s: the guest decides %s; natively %v", rs.Ref(), c.Name, got, err)
				}
				continue
			}
			if string(got) != string(want) {
				t.Errorf("%s %s: the guest says %s; natively %s", rs.Ref(), c.Name, got, want)
			}
		}
	}
}

// Only the version asked for, and what it imports, compiles: a broken
// version no one asks for costs nothing and says nothing, and the broken
// one asked for is load_error with its position.
func TestGuestLoadLazyCompilesWhatIsAsked(t *testing.T) {
	broken := ruletest.Rules()
	broken["jax/v1/rules.yaml"] = &fstest.MapFile{Data: []byte("rules: [")}
	g := lazyGuest(t, broken)
	exchange, out, status := g.RuleSet("exchange")
	if status != contract.StatusOK {
		t.Fatalf("RuleSet(exchange) with jax@v1 broken: %s %s", status, out)
	}
	if got, status := g.ResolveJSON(context.Background(), exchange, []byte(seedLine)); status != contract.StatusOK || !strings.Contains(string(got), `"rule":"unknown-platform-host-copy"`) {
		t.Errorf("the seed's line: %s %s", status, got)
	}
	if _, out, status := g.RuleSet("jax@v1"); status != contract.StatusLoadError || !strings.Contains(string(out), `"file":"rules/jax/v1/rules.yaml","line":1`) {
		t.Errorf("RuleSet(jax@v1), broken: %s %s; want load_error at rules/jax/v1/rules.yaml:1", status, out)
	}
	if _, out, status := g.RuleSet("nosuchlib"); status != contract.StatusNoRuleSet || !strings.Contains(string(out), `"code":"no_ruleset"`) {
		t.Errorf("RuleSet(nosuchlib): %s %s; want no_ruleset", status, out)
	}
}

// A rule set keeps its handle however it is asked for again, and whatever
// was compiled for another since; a released handle is not handed out
// again.
func TestGuestLoadLazyHandles(t *testing.T) {
	g := lazyGuest(t, ruletest.Rules())
	jax, _, _ := g.RuleSet("jax@v3")
	exchange, _, _ := g.RuleSet("exchange@v2") // imports jax@v3, compiled before
	v1, _, _ := g.RuleSet("jax@v1")
	if again, _, _ := g.RuleSet("jax@v3"); again != jax {
		t.Errorf("jax@v3 got handle %d, then %d after exchange and jax@v1", jax, again)
	}
	if newest, _, _ := g.RuleSet("jax"); newest != jax {
		t.Errorf("jax (the newest, jax@v3) got handle %d; jax@v3 has %d", newest, jax)
	}
	if len(map[uint32]bool{jax: true, exchange: true, v1: true}) != 3 {
		t.Errorf("three rule sets share handles: %d %d %d", jax, exchange, v1)
	}
	g.Release(v1)
	if again, _, status := g.RuleSet("jax@v1"); status != contract.StatusOK || again == v1 {
		t.Errorf("jax@v1 after its release: handle %d (%s), want a new one, not %d", again, status, v1)
	}
}

// A full Load after LoadLazy reports every error again, and one that
// fails leaves the lazily loaded rules in service.
func TestGuestLoadAfterLoadLazy(t *testing.T) {
	g := lazyGuest(t, ruletest.Rules())
	archive, err := contract.PackFS(ruletest.WithTypo(ruletest.Rules()))
	if err != nil {
		t.Fatal(err)
	}
	if out, status := g.Load(archive); status != contract.StatusLoadError {
		t.Fatalf("Load with a typo: %s %s", status, out)
	}
	if _, out, status := g.RuleSet("exchange"); status != contract.StatusOK {
		t.Errorf("RuleSet(exchange) after a refused Load: %s %s", status, out)
	}
}

// A version compiled lazily is compiled without its tests, so a broken
// tests.yaml does not keep it from deciding; Test compiles the tests, and
// reports what a whole Load reports.
func TestGuestLoadLazyTests(t *testing.T) {
	ctx := context.Background()
	whole := New(Host{})
	archive, err := contract.PackFS(ruletest.Rules())
	if err != nil {
		t.Fatal(err)
	}
	if out, status := whole.Load(archive); status != contract.StatusOK {
		t.Fatalf("Load: %s %s", status, out)
	}
	g := lazyGuest(t, ruletest.Rules())
	for _, ref := range []string{"jax@v3", "exchange@v2"} {
		wh, _, _ := whole.RuleSet(ref)
		h, out, status := g.RuleSet(ref)
		if status != contract.StatusOK {
			t.Fatalf("RuleSet(%s): %s %s", ref, status, out)
		}
		want, _ := whole.Test(ctx, wh)
		for _, which := range []string{"first", "second"} { // the second runs the tests the first compiled
			if got, status := g.Test(ctx, h); status != contract.StatusOK || string(got) != string(want) {
				t.Errorf("Test(%s) after LoadLazy, the %s time: %s %.200s\nafter Load: %.200s", ref, which, status, got, want)
			}
		}
	}

	broken := ruletest.Rules()
	broken["jax/v3/tests.yaml"] = &fstest.MapFile{Data: []byte("cases: [")}
	g = lazyGuest(t, broken)
	h, out, status := g.RuleSet("jax@v3")
	if status != contract.StatusOK {
		t.Fatalf("RuleSet(jax@v3) with its tests.yaml broken: %s %s", status, out)
	}
	if got, status := g.ResolveJSON(ctx, h, []byte(`{"platform":"gpu","platform_version":"<unknown>","local_hardware_id":0}`)); status != contract.StatusOK || !strings.Contains(string(got), `Unknown GPU platform`) {
		t.Errorf("the seed's line: %s %s", status, got)
	}
	if out, status := g.Test(ctx, h); status != contract.StatusLoadError || !strings.Contains(string(out), `"file":"rules/jax/v3/tests.yaml","line":1`) {
		t.Errorf("Test(jax@v3), its tests.yaml broken: %s %s; want load_error at rules/jax/v3/tests.yaml:1", status, out)
	}
}

// The module compiles the engine's bound on matches (issue 25): the rule
// that cost one request 20 s natively and froze the pool in the module
// is refused at Load, and the rules in service stay.
func TestGuestLoadRefusesCostlyPattern(t *testing.T) {
	g := lazyGuest(t, ruletest.Rules())
	fsys := ruletest.Rules()
	f := fsys["jax/v3/rules.yaml"]
	pattern := strings.Repeat(".{0,1000}", 42) + "b"
	f.Data = []byte(strings.Replace(string(f.Data), "when: platform == 'cpu'", `when: "platform == 'evil' && platform_version.matches('`+pattern+`')"`, 1))
	archive, err := contract.PackFS(fsys)
	if err != nil {
		t.Fatal(err)
	}
	if out, status := g.Load(archive); status != contract.StatusLoadError || !strings.Contains(string(out), `"code":"cost_limit"`) {
		t.Errorf("Load of issue 25's rule: %s %.300s, want load_error with cost_limit", status, out)
	}
	if _, out, status := g.RuleSet("jax"); status != contract.StatusOK {
		t.Errorf("RuleSet(jax) after a refused Load: %s %s", status, out)
	}
}
