package live_test

import (
	"bytes"
	"context"
	"io/fs"
	"strings"
	"testing"

	"github.com/dlroute/dlroute/bundle"
	"github.com/dlroute/dlroute/engine"
	"github.com/dlroute/dlroute/internal/testkit/ruletest"
	"github.com/dlroute/dlroute/live"
	"github.com/dlroute/dlroute/plan"
)

// withPlans packs fsys with plans as its plans.bin, signed by private.
func withPlans(t testing.TB, fsys fs.FS, plans []byte, private string) []byte {
	t.Helper()
	data, _, err := ruletest.Bundle(fsys, bundle.BuildOptions{SignerKeys: []string{private}, Plans: plans})
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// TestGateChecksBundlePlans: a bundle whose plans.bin is what its rules
// build is admitted, and its snapshot hands hosts those plans
// (PlanSet); one whose plans.bin was changed and signed again is refused
// at compile with plans_mismatch naming the version, and the rules in
// force stay in force; a bundle without plans.bin, as built before
// bundles carried plans, is admitted, its PlanSet the gate's plans.
func TestGateChecksBundlePlans(t *testing.T) {
	ctx := context.Background()
	private, public, _ := bundle.GenerateKey("dlroute-rules")
	fsys := ruletest.Rules()
	good, err := live.BundlePlans(fsys, engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	gate := live.Gate{Keys: []string{public}}
	s, err := gate.Admit(ctx, &live.Candidate{Origin: "b.tar.gz", Archive: withPlans(t, fsys, good, private)})
	if err != nil {
		t.Fatalf("Admit of a bundle with its rules' plans: %v", err)
	}
	if !bytes.Equal(s.PlanSet(), good) {
		t.Errorf("Snapshot.PlanSet() is %d bytes; want the bundle's plans.bin, %d", len(s.PlanSet()), len(good))
	}

	entries, err := plan.DecodeSet(bytes.Clone(good))
	if err != nil {
		t.Fatal(err)
	}
	changed := entries[len(entries)-1].Ref
	entries[len(entries)-1].Plan = bytes.Clone(entries[len(entries)-1].Plan)
	entries[len(entries)-1].Plan[len(entries[len(entries)-1].Plan)/2] ^= 1
	tampered := withPlans(t, fsys, plan.EncodeSet(entries), private)

	// The rules in force: the folder, which a gate with keys would refuse.
	r := openStatic(t, fsys, live.Config{})
	inForce := r.Current().Digest()
	ref := refusal(t, r.Offer(ctx, &live.Candidate{Origin: "b.tar.gz", Archive: tampered}))
	if ref.Stage != live.StageCompile || ref.Code != bundle.CodePlansMismatch || !strings.Contains(ref.Reason, "plans.bin: the plan of "+changed+" ") {
		t.Errorf("a bundle with a changed plan, signed: refused at %s, %s: %s; want compile, %s, naming plans.bin and %s", ref.Stage, ref.Code, ref.Reason, bundle.CodePlansMismatch, changed)
	}
	if got := r.Current().Digest(); got != inForce {
		t.Errorf("after the refusal the rules in force are %s; want %s, as before", got, inForce)
	}

	s, err = gate.Admit(ctx, &live.Candidate{Origin: "b.tar.gz", Archive: archive(t, fsys, private)})
	if err != nil {
		t.Fatalf("Admit of a bundle without plans.bin: %v", err)
	}
	set, err := plan.DecodeSet(s.PlanSet())
	if err != nil || len(set) != len(s.Catalog().RuleSets()) || !bytes.Equal(set[0].Plan, s.Plan(set[0].Ref)) {
		t.Errorf("PlanSet of a bundle without plans.bin: %d plans (%v); want the gate's plan of each of %d versions", len(set), err, len(s.Catalog().RuleSets()))
	}
}
