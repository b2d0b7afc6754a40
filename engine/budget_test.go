package engine_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dlroute/dlroute/engine"
	"github.com/dlroute/dlroute/internal/testkit/ruletest"
	"github.com/dlroute/dlroute/rules"
)

// The budgets of a load and of a decision (budget.go): rules that would
// take a host's memory, or a decision's time, are refused at load, at the
// expression that crosses the budget.

// nestRule is a rule whose condition is six exists nested, each over a
// list of one: legal, never true, cheap to decide, and about 70
// expression nodes to compile.
func nestRule(i int) string {
	cond := fmt.Sprintf("f == %d", i+2)
	for _, v := range []string{"f", "e", "d", "c", "b", "a"} {
		cond = fmt.Sprintf("[1].exists(%s, %s)", v, cond)
	}
	return fmt.Sprintf("  - id: nest-%d\n    when: \"%s\"\n    device: {type: kDLCPU, id: 0}\n", i, cond)
}

// slowRule is a rule whose condition is guarded by a comparison that is
// never true, over a nested loop of MaxListLen squared steps that the
// guard skips: cheap to decide, but estimated at its worst.
func slowRule(i int) string {
	return fmt.Sprintf("  - id: slow-%d\n    when: platform == 'never-%d' && [%s].exists(x, [%s].exists(y, x == y + %d))\n    device: {type: kDLCPU, id: 0}\n",
		i, i, ints(engine.MaxListLen), ints(engine.MaxListLen), i+engine.MaxListLen)
}

func ints(n int) string {
	s := make([]string, n)
	for i := range s {
		s[i] = fmt.Sprint(i)
	}
	return strings.Join(s, ", ")
}

// hostileRules copies the shipped jax@v3 into a temporary rules folder
// and puts n rules made by rule first in its rules.yaml; it returns the
// folder and the line of the first added rule's when.
func hostileRules(t testing.TB, n int, rule func(int) string) (string, int) {
	t.Helper()
	var added strings.Builder
	for i := range n {
		added.WriteString(rule(i))
	}
	dir := t.TempDir()
	line, err := ruletest.WriteWithRulesFirst(dir, added.String())
	if err != nil {
		t.Fatal(err)
	}
	return dir, line + 1 // the first rule's when
}

// loopRule is slowRule without its guard: every decision runs its
// MaxListLen squared steps.
func loopRule(i int) string {
	return fmt.Sprintf("  - id: loop-%d\n    when: \"[%s].exists(x, [%s].exists(y, x == y + platform.size() + %d))\"\n    device: {type: kDLCPU, id: 0}\n",
		i, ints(engine.MaxListLen), ints(engine.MaxListLen), i+engine.MaxListLen)
}

// stringRule scans platform_version, at MaxStringLen, for a marker that
// is never there.
func stringRule(i int) string {
	return fmt.Sprintf("  - id: scan-%d\n    when: platform_version.contains('never-%d') || platform_version.lowerAscii().contains('never-%d')\n    device: {type: kDLCPU, id: 0}\n", i, i, i)
}

// BenchmarkDecisionAtBudget decides, memo off, with rules that take one
// decision's cost to just under MaxDecisionCost, each shape on its own:
// the CPU a decision at the budget takes.
func BenchmarkDecisionAtBudget(b *testing.B) {
	for _, shape := range []struct {
		name string
		rule func(int) string
	}{{"loops", loopRule}, {"strings", stringRule}} {
		b.Run(shape.name, func(b *testing.B) {
			one, _ := hostileRules(b, 1, shape.rule)
			rs := loadJax(b, one)
			per := engine.DecisionCost(rs) - engine.DecisionCost(loadJax(b, mustHostile(b, 0)))
			n := int((engine.MaxDecisionCost-engine.DecisionCost(rs))/per) - 1
			dir, _ := hostileRules(b, n, shape.rule)
			for _, err := engine.Load(os.DirFS(dir), engine.Options{}); err != nil; _, err = engine.Load(os.DirFS(dir), engine.Options{}) {
				n-- // the outcomes' share makes per a little low
				dir, _ = hostileRules(b, n, shape.rule)
			}
			rs = loadJax(b, dir)
			in := engine.Input{"platform": "tpu", "platform_version": strings.Repeat("x", engine.MaxStringLen), "shards": 1}
			for b.Loop() {
				if _, err := rs.Resolve(context.Background(), in); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(engine.DecisionCost(rs)), "cost/op")
		})
	}
}

func mustHostile(b testing.TB, n int) string {
	dir, _ := hostileRules(b, n, loopRule)
	return dir
}

func loadJax(t testing.TB, dir string) *engine.RuleSet {
	t.Helper()
	c, err := engine.Load(os.DirFS(dir), engine.Options{MemoSize: -1})
	if err != nil {
		t.Fatal(err)
	}
	rs, err := c.RuleSet("jax")
	if err != nil {
		t.Fatal(err)
	}
	return rs
}

// budgetRefusal loads dir and returns its one error, which must have
// code and sit on the when of one of the n rules hostileRules added from
// line first (three lines each).
func budgetRefusal(t *testing.T, dir string, first, n int, code engine.Code) *engine.Error {
	t.Helper()
	_, err := engine.Load(os.DirFS(dir), engine.Options{})
	errs := engine.Errors(err)
	if len(errs) != 1 || errs[0].Code != code {
		t.Fatalf("Load: got %v, want one %s error", err, code)
	}
	e := errs[0]
	if e.Pos == nil || e.Pos.File != "rules/jax/v3/rules.yaml" || e.Pos.Line < first || e.Pos.Line >= first+3*n || e.Hint == "" {
		t.Fatalf("Load: got %v (hint %q), want it at an added rule of rules/jax/v3/rules.yaml, lines %d to %d, with a hint", e, e.Hint, first, first+3*n)
	}
	return e
}

func TestLoadPastItsNodeBudgetIsRefused(t *testing.T) {
	one, _ := hostileRules(t, 1, nestRule)
	base, _ := hostileRules(t, 0, nestRule)
	per := engine.LoadNodes(mustLoad(t, one)) - engine.LoadNodes(mustLoad(t, base))
	fit := (engine.MaxLoadNodes - engine.LoadNodes(mustLoad(t, base))) / per

	// Just under the budget: it loads.
	under, _ := hostileRules(t, fit, nestRule)
	if got := engine.LoadNodes(mustLoad(t, under)); got > engine.MaxLoadNodes || got < engine.MaxLoadNodes-per {
		t.Fatalf("%d rules weigh %d nodes; want just under %d", fit, got, engine.MaxLoadNodes)
	}
	// A few rules more cross it, at the rule that does.
	over, first := hostileRules(t, fit+5, nestRule)
	e := budgetRefusal(t, over, first, fit+5, engine.CodeLoadTooLarge)
	if !strings.Contains(e.Message, "MaxLoadNodes") {
		t.Errorf("message %q does not name the limit", e.Message)
	}
}

// Two versions that each fit may not fit together: the budget is the
// load's, so a folder of many versions is refused as one.
func TestLoadBudgetCountsEveryVersion(t *testing.T) {
	base, _ := hostileRules(t, 0, nestRule)
	one, _ := hostileRules(t, 1, nestRule)
	per := engine.LoadNodes(mustLoad(t, one)) - engine.LoadNodes(mustLoad(t, base))
	n := (engine.MaxLoadNodes/2)/per + 10
	dir, _ := hostileRules(t, n, nestRule)
	mustLoad(t, dir)
	text, err := os.ReadFile(filepath.Join(dir, "jax", "v3", engine.RulesFile))
	if err != nil {
		t.Fatal(err)
	}
	v4 := filepath.Join(dir, "jax", "v4")
	if err := os.CopyFS(v4, os.DirFS(filepath.Join(dir, "jax", "v3"))); err != nil {
		t.Fatal(err)
	}
	manifest, err := os.ReadFile(filepath.Join(v4, engine.ManifestFile))
	if err != nil {
		t.Fatal(err)
	}
	manifest = []byte(strings.Replace(string(manifest), "version: v3", "version: v4", 1))
	if err := os.WriteFile(filepath.Join(v4, engine.ManifestFile), manifest, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = engine.Load(os.DirFS(dir), engine.Options{})
	errs := engine.Errors(err)
	if len(errs) != 1 || errs[0].Code != engine.CodeLoadTooLarge || errs[0].Pos == nil || errs[0].Pos.File != "rules/jax/v4/rules.yaml" {
		t.Fatalf("Load of two versions of %d bytes each: got %v, want one %s in jax/v4", len(text), err, engine.CodeLoadTooLarge)
	}
}

// Values each get an environment of their own, a copy of the names
// before them: a few thousand short values would take gigabytes.
func TestManyValuesAreChargedToTheBudget(t *testing.T) {
	dir, _ := hostileRules(t, 0, nestRule)
	path := filepath.Join(dir, "jax", "v3", engine.RulesFile)
	text, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var values strings.Builder
	for i := range 3000 {
		fmt.Fprintf(&values, "  v%d: %d\n", i, i)
	}
	out := strings.Replace(string(text), "\nvalues:\n", "\nvalues:\n"+values.String(), 1)
	if err := os.WriteFile(path, []byte(out), 0o644); err != nil {
		t.Fatal(err)
	}
	err, alloc := loadBounded(t, os.DirFS(dir))
	e := refusedWith(t, err, engine.CodeLoadTooLarge)
	if e.Pos == nil || !strings.HasPrefix(e.Source, "  v") {
		t.Errorf("refused at %v; want a value's name", e)
	}
	if alloc > 512<<20 {
		t.Errorf("the refused load allocated %d MB", alloc>>20)
	}
}

func TestDecisionPastItsCostBudgetIsRefused(t *testing.T) {
	one, _ := hostileRules(t, 1, slowRule)
	base, _ := hostileRules(t, 0, slowRule)
	per := engine.DecisionCost(mustRuleSet(t, one)) - engine.DecisionCost(mustRuleSet(t, base))
	n := int((engine.MaxDecisionCost-engine.DecisionCost(mustRuleSet(t, base)))/per) + 1
	// The guard makes every decision cheap; the bound is on what the
	// rules could cost, which is what the estimate knows at load.
	dir, first := hostileRules(t, n, slowRule)
	e := budgetRefusal(t, dir, first, n, engine.CodeDecisionCost)
	if !strings.Contains(e.Message, "MaxDecisionCost") || !strings.Contains(e.Source, "when:") {
		t.Errorf("got %v; want the when of a rule, and the limit named", e)
	}
	if under, _ := hostileRules(t, n-2, slowRule); engine.DecisionCost(mustRuleSet(t, under)) > engine.MaxDecisionCost {
		t.Errorf("%d rules: a bound over the budget was accepted", n-2)
	}
}

// The shipped rules fit both budgets with the margins BENCHMARKS.md, "The
// budgets' sizes", states.
func TestShippedRulesFitTheBudgets(t *testing.T) {
	c, err := engine.Load(rules.FS, engine.Options{TrustParsed: true})
	if err != nil {
		t.Fatal(err)
	}
	if n := engine.LoadNodes(c); n*3/2 > engine.MaxLoadNodes {
		t.Errorf("the shipped rules weigh %d nodes; the budget %d is less than 1.5 times that", n, engine.MaxLoadNodes)
	}
	for _, rs := range c.RuleSets() {
		if cost := engine.DecisionCost(rs); cost*3/2 > engine.MaxDecisionCost {
			t.Errorf("%s: a decision may cost %d; the budget %d is less than 1.5 times that", rs.Ref(), cost, engine.MaxDecisionCost)
		}
	}
}

func mustLoad(t testing.TB, dir string) *engine.Catalog {
	t.Helper()
	c, err := engine.Load(os.DirFS(dir), engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func mustRuleSet(t testing.TB, dir string) *engine.RuleSet {
	t.Helper()
	rs, err := mustLoad(t, dir).RuleSet("jax")
	if err != nil {
		t.Fatal(err)
	}
	return rs
}
