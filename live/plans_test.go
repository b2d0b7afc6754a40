package live_test

import (
	"bytes"
	"context"
	"errors"
	"testing"
	"testing/fstest"

	"github.com/dlroute/dlroute/engine"
	"github.com/dlroute/dlroute/internal/testkit/ruletest"
	"github.com/dlroute/dlroute/live"
	"github.com/dlroute/dlroute/rules"
)

// TestGateBuildsPlans: the gate builds every version's plan as part of
// compiling: an admitted snapshot carries them (the bytes
// engine.RuleSet.Plan writes), and a version with an expression no plan
// holds is refused at StageCompile with plan_unsupported, reported once
// though the versions importing it meet it again.
func TestGateBuildsPlans(t *testing.T) {
	ctx := context.Background()
	s, err := (live.Gate{}).Admit(ctx, &live.Candidate{Origin: "rules", Dir: ruletest.Rules()})
	if err != nil {
		t.Fatal(err)
	}
	for _, rs := range s.Catalog().RuleSets() {
		want, err := rs.Plan()
		if err != nil || !bytes.Equal(s.Plan(rs.Ref()), want) {
			t.Errorf("Snapshot.Plan(%s): %d bytes; want RuleSet.Plan's %d (%v)", rs.Ref(), len(s.Plan(rs.Ref())), len(want), err)
		}
	}
	if s.Plan("jax@v9") != nil {
		t.Error("Snapshot.Plan of a version it does not hold is not nil")
	}

	fsys := ruletest.Rules()
	const old = "when: shards != 1"
	fsys["jax/v3/rules.yaml"] = &fstest.MapFile{Data: bytes.Replace(fsys["jax/v3/rules.yaml"].Data, []byte(old), []byte(old+" && platform.matches('^g')"), 1)}
	_, err = (live.Gate{}).Admit(ctx, &live.Candidate{Origin: "rules", Dir: fsys})
	var ref *live.Refusal
	list := engine.Errors(err)
	if !errors.As(err, &ref) || ref.Stage != live.StageCompile || ref.Code != engine.CodePlanUnsupported || len(list) != 1 || list[0].Pos.String() != "rules/jax/v3/rules.yaml:52:42" {
		t.Errorf("a version no plan holds: Admit = %v (%d errors); want refused at compile, plan_unsupported, once, at rules/jax/v3/rules.yaml:52:42", err, len(list))
	}
}

// BenchmarkPlansShipped is what building the plans adds to the check of
// the shipped rules (BenchmarkGateShipped is the whole check):
//
//	go test ./live -run '^$' -bench 'PlansShipped|GateShipped' -count 3
func BenchmarkPlansShipped(b *testing.B) {
	cat, err := engine.Load(rules.FS, engine.Options{})
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := live.Plans(cat); err != nil {
			b.Fatal(err)
		}
	}
}
