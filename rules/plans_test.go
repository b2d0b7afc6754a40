package rules_test

import (
	"bytes"
	"testing"

	"github.com/dlroute/dlroute/engine"
	"github.com/dlroute/dlroute/plan"
	"github.com/dlroute/dlroute/rules"
)

// TestPlansFileIsFresh: plans.bin holds exactly the plans the embedded
// rules build now, one for each version.
func TestPlansFileIsFresh(t *testing.T) {
	want, err := engine.WritePlans(rules.FS, engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	got, err := rules.FS.ReadFile(engine.PlansFile)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("rules/%s (%d bytes) is not what the rules' plans are now (%d bytes): run go generate ./rules", engine.PlansFile, len(got), len(want))
	}
	entries, err := plan.DecodeSet(got)
	if err != nil {
		t.Fatalf("DecodeSet(%s) = %v", engine.PlansFile, err)
	}
	cat, err := engine.Load(rules.FS, engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != len(cat.RuleSets()) {
		t.Errorf("%s holds %d plans; the rules have %d versions", engine.PlansFile, len(entries), len(cat.RuleSets()))
	}
}
