package guest

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/dlroute/dlroute/engine"
	"github.com/dlroute/dlroute/internal/contract"
	"github.com/dlroute/dlroute/rules"
)

func TestGuestTest(t *testing.T) {
	g, h := loaded(t, nil)
	out, status := g.Test(context.Background(), h)
	var report TestReport
	if err := json.Unmarshal(out, &report); status != contract.StatusOK || err != nil {
		t.Fatalf("Test: %s %s (%v)", status, out, err)
	}
	if report.Ref != "jax@v3" || report.Failed != 0 || report.Passed != len(report.Cases) || report.Passed == 0 {
		t.Errorf("Test(jax) = %s %d passed, %d failed of %d cases; want jax@v3, all passed", report.Ref, report.Passed, report.Failed, len(report.Cases))
	}
	if c := report.Cases[0]; c.Got == nil || c.Error != nil || c.Position.Line == 0 || c.Name == "" {
		t.Errorf("first case: %+v, want a name, a position and a decision", c)
	}
	if _, status := g.Test(context.Background(), 99); status != contract.StatusBadHandle {
		t.Errorf("Test(99): %s, want %s", status, contract.StatusBadHandle)
	}
}

func TestGuestTestFailing(t *testing.T) {
	files := map[string]string{}
	g := New(Host{})
	edited := strings.Replace(readRule(t, "jax/v3/rules.yaml"), "{marker: rocm,", "{marker: rocmx,", 1)
	files["jax/v3/rules.yaml"] = edited
	for _, name := range []string{"jax/v3/manifest.yaml", "jax/v3/device_types.yaml", "jax/v3/tests.yaml"} {
		files[name] = readRule(t, name)
	}
	if out, status := g.Load(pack(files)); status != contract.StatusOK {
		t.Fatalf("Load: %s %s", status, out)
	}
	h, _, _ := g.RuleSet("jax@v3")
	out, _ := g.Test(context.Background(), h)
	var report TestReport
	json.Unmarshal(out, &report)
	if report.Failed == 0 {
		t.Fatalf("Test after renaming the rocm marker: no case failed")
	}
	unknown := 0
	for _, c := range report.Cases {
		if c.Pass {
			continue
		}
		if c.Got == nil {
			t.Errorf("case %s failed with no decision (%v)", c.Name, c.Error)
		} else if c.Got.Rule == "gpu-unknown-platform" {
			unknown++
		}
	}
	if unknown == 0 {
		t.Errorf("no failing case got the unknown-platform decision")
	}
}

func TestGuestRelease(t *testing.T) {
	g, h := loaded(t, nil)
	g.Release(h)
	if _, status := g.Describe(h); status != contract.StatusBadHandle {
		t.Errorf("Describe after Release: %s, want %s", status, contract.StatusBadHandle)
	}
	g.Release(h) // twice does nothing
	g.Release(0)
	h2, out, status := g.RuleSet("jax")
	if status != contract.StatusOK || h2 == h {
		t.Errorf("RuleSet after Release: handle %d (%s %s), want a new handle, not %d", h2, status, out, h)
	}
}

func readRule(t *testing.T, name string) string {
	t.Helper()
	data, err := rules.FS.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// pack writes files into a rules archive, as a host does.
func pack(files map[string]string) []byte {
	var b []byte
	for name, data := range files {
		b = appendString(appendString(b, name), data)
	}
	return b
}

func appendString(b []byte, s string) []byte {
	n := len(s)
	return append(append(b, byte(n), byte(n>>8), byte(n>>16), byte(n>>24)), s...)
}

func TestGuestDiff(t *testing.T) {
	g, _ := loaded(t, nil)
	v2, _, _ := g.RuleSet("jax@v2")
	v3, _, _ := g.RuleSet("jax@v3")
	out, status := g.Diff(context.Background(), v2, v3)
	var report engine.DiffReport
	if err := json.Unmarshal(out, &report); status != contract.StatusOK || err != nil {
		t.Fatalf("Diff(jax@v2, jax@v3): %s %.200s (%v)", status, out, err)
	}
	want, err := engine.Diff(context.Background(), ruleSetOf(t, "jax@v2"), ruleSetOf(t, "jax@v3"), engine.DiffOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if report.From != "jax@v2" || report.To != "jax@v3" || report.Tried != want.Tried || report.Changed != want.Changed || len(report.Groups) != len(want.Groups) {
		t.Errorf("Diff in the guest: %s -> %s, %d tried, %d changed in %d groups; natively %d, %d in %d",
			report.From, report.To, report.Tried, report.Changed, len(report.Groups), want.Tried, want.Changed, len(want.Groups))
	}
	if _, status := g.Diff(context.Background(), v2, 99); status != contract.StatusBadHandle {
		t.Errorf("Diff with a bad handle: %s, want %s", status, contract.StatusBadHandle)
	}
	x1, _, _ := g.RuleSet("exchange@v1")
	x2, _, _ := g.RuleSet("exchange@v2")
	if out, status := g.Diff(context.Background(), x1, x2); status != contract.StatusEvalError || !strings.Contains(string(out), `"code":"domain_too_large"`) {
		t.Errorf("Diff of the exchange versions: %s %.200s, want eval_error domain_too_large (over %d inputs)", status, out, MaxDiffInputs)
	}
}

func ruleSetOf(t *testing.T, ref string) *engine.RuleSet {
	t.Helper()
	cat, err := engine.Load(rules.FS, engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	rs, err := cat.RuleSet(ref)
	if err != nil {
		t.Fatal(err)
	}
	return rs
}

// An edit's load reuses the versions it did not change: the rule set, and
// so its handle, stays the same.
func TestGuestLoadReusesWhatDidNotChange(t *testing.T) {
	files := map[string]string{}
	for _, dir := range []string{"jax/v3/", "exchange/v2/"} {
		for _, name := range []string{"manifest.yaml", "device_types.yaml", "rules.yaml", "tests.yaml"} {
			if data, err := rules.FS.ReadFile(dir + name); err == nil {
				files[dir+name] = string(data)
			}
		}
	}
	g := New(Host{})
	if out, status := g.Load(pack(files)); status != contract.StatusOK {
		t.Fatalf("Load: %s %s", status, out)
	}
	jax, _, _ := g.RuleSet("jax@v3")
	exchange, _, _ := g.RuleSet("exchange@v2")
	files["exchange/v2/rules.yaml"] += "\n# an edit\n"
	if out, status := g.Load(pack(files)); status != contract.StatusOK {
		t.Fatalf("Load: %s %s", status, out)
	}
	if h, _, _ := g.RuleSet("jax@v3"); h != jax {
		t.Errorf("jax@v3, unchanged, got handle %d after the load, want %d", h, jax)
	}
	if h, _, _ := g.RuleSet("exchange@v2"); h == exchange {
		t.Errorf("exchange@v2, edited, kept handle %d", h)
	}
}
