package main

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dlroute/dlroute/bundle"
	"github.com/dlroute/dlroute/engine"
	"github.com/dlroute/dlroute/internal/testkit/ruletest"
	"github.com/dlroute/dlroute/live"
	"github.com/dlroute/dlroute/plan"
)

// TestBundleBuildCarriesPlans: `bundle build` packs the plans of every
// version as plans.bin under the signed manifest, what the engine builds
// from the rules; `bundle verify` says so. A bundle whose plans.bin was
// changed and signed again is refused with plans_mismatch, and one
// without plans.bin (built before bundles carried plans) still verifies.
func TestBundleBuildCarriesPlans(t *testing.T) {
	dir := t.TempDir()
	key, rulesDir := filepath.Join(dir, "rules.key"), filepath.Join(dir, "rules")
	fsys := ruletest.Rules()
	if err := ruletest.WriteDir(rulesDir, fsys); err != nil {
		t.Fatal(err)
	}
	mustRun(t, "bundle", "keygen", "-o", key)
	good := filepath.Join(dir, "good.tar.gz")
	mustRun(t, "bundle", "build", rulesDir, "-o", good, "--sign", key)
	b, err := bundle.ReadFile(good, bundle.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want, err := live.BundlePlans(fsys, engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(b.Plans(), want) || b.Manifest.Plans == nil {
		t.Fatalf("bundle build packed plans.bin of %d bytes (manifest: %v); want the rules' plans, %d bytes", len(b.Plans()), b.Manifest.Plans, len(want))
	}
	if out := mustRun(t, "bundle", "verify", good, "--key", key+".pub"); !strings.Contains(out, "plans: 8 versions, ") {
		t.Errorf("bundle verify of a bundle with plans said:\n%s", out)
	}

	private, err := os.ReadFile(key)
	if err != nil {
		t.Fatal(err)
	}
	signed := func(name string, plans []byte) string {
		t.Helper()
		data, _, err := ruletest.Bundle(fsys, bundle.BuildOptions{SignerKeys: []string{string(private)}, Plans: plans})
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	entries, _ := plan.DecodeSet(bytes.Clone(want))
	entries[0].Plan = bytes.Clone(entries[0].Plan)
	entries[0].Plan[len(entries[0].Plan)/2] ^= 1
	var stderr strings.Builder
	status := run([]string{"bundle", "verify", signed("tampered.tar.gz", plan.EncodeSet(entries)), "--key", key + ".pub"}, nil, io.Discard, &stderr)
	if status != 1 || !strings.Contains(stderr.String(), "at compile: plans.bin: the plan of "+entries[0].Ref+" is not") || !strings.Contains(stderr.String(), "\nhint: the plans changed") {
		t.Errorf("bundle verify of a bundle whose plans.bin was changed and signed again: status %d\n%s\nwant 1, refused at compile naming %s in plans.bin, with a hint", status, stderr.String(), entries[0].Ref)
	}

	if out := mustRun(t, "bundle", "verify", signed("old.tar.gz", nil), "--key", key+".pub"); !strings.Contains(out, "plans: none") {
		t.Errorf("bundle verify of a bundle without plans.bin said:\n%s", out)
	}
}
