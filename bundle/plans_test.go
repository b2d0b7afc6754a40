package bundle_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"testing"

	"github.com/dlroute/dlroute/bundle"
	"github.com/dlroute/dlroute/plan"
	"github.com/dlroute/dlroute/rules"
)

// TestBuildCarriesPlans: a bundle built with plans carries them as
// plans.bin, listed in the signed manifest with its size and SHA-256, and
// Read gives back the same bytes; the rules' FS does not show the file.
func TestBuildCarriesPlans(t *testing.T) {
	private, public := keyPair(t, "dlroute-rules")
	data := build(t, bundle.BuildOptions{SignerKeys: []string{private}, Plans: rules.Plans})
	b, err := bundle.Read(data, bundle.ReadOptions{Keys: []string{public}})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(b.Plans(), rules.Plans) {
		t.Errorf("Read(Build(Plans: rules/plans.bin)).Plans() is %d bytes; want rules/plans.bin's %d", len(b.Plans()), len(rules.Plans))
	}
	sum := sha256.Sum256(rules.Plans)
	want := bundle.File{Path: "plans.bin", Size: int64(len(rules.Plans)), SHA256: hex.EncodeToString(sum[:])}
	if p := b.Manifest.Plans; p == nil || *p != want {
		t.Errorf("Manifest.Plans = %+v; want %+v", p, want)
	}
	if _, err := b.FS().Open("plans.bin"); err == nil {
		t.Error("the bundle's rules FS shows plans.bin; it holds only <name>/<version>/<file>")
	}
	if err := b.CheckPlans(rules.Plans); err != nil {
		t.Errorf("CheckPlans(the same plans) = %v; want nil", err)
	}
}

// TestBundleWithoutPlans: a bundle built without plans has no plans.bin
// and no "plans" in its manifest, so readers from before plans read it,
// and it reads here with Plans() nil and nothing for CheckPlans to refuse.
func TestBundleWithoutPlans(t *testing.T) {
	data := build(t, bundle.BuildOptions{})
	for _, m := range unpackAll(t, data) {
		if m.name == "plans.bin" || m.name == ".manifest" && bytes.Contains(m.body, []byte(`"plans"`)) {
			t.Fatalf("a bundle built without plans has %s: %s", m.name, m.body[:min(len(m.body), 80)])
		}
	}
	b, err := bundle.Read(data, bundle.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if b.Plans() != nil || b.Manifest.Plans != nil || b.CheckPlans(rules.Plans) != nil {
		t.Errorf("a bundle without plans: Plans() %d bytes, Manifest.Plans %v; want none, and CheckPlans passing", len(b.Plans()), b.Manifest.Plans)
	}
}

// tamperedPlans is rules/plans.bin with one byte of its last plan
// changed: still a set of the same versions, no longer their plans.
func tamperedPlans(t testing.TB) []byte {
	t.Helper()
	entries, err := plan.DecodeSet(bytes.Clone(rules.Plans))
	if err != nil {
		t.Fatal(err)
	}
	last := &entries[len(entries)-1]
	last.Plan = bytes.Clone(last.Plan)
	last.Plan[len(last.Plan)/2] ^= 1
	return plan.EncodeSet(entries)
}

// TestPlansTampered: plans.bin changed after the manifest is a digest
// mismatch, and a missing or unlisted one is refused; Build refuses a
// set of other versions than the rules'; a changed plan of the same
// versions, built in again, reads (only the engine can tell), and
// CheckPlans names its version.
func TestPlansTampered(t *testing.T) {
	data := build(t, bundle.BuildOptions{Plans: rules.Plans})
	replace := func(body []byte, drop bool) []byte {
		return edit(t, data, func(ms []member) []member {
			var out []member
			for _, m := range ms {
				if m.name == "plans.bin" {
					if drop {
						continue
					}
					m.body = body
				}
				out = append(out, m)
			}
			return out
		})
	}
	oneVersion := plan.EncodeSet([]plan.Entry{{Ref: "jax@v3", Plan: []byte("x")}})
	for _, c := range []struct {
		what    string
		archive []byte
		want    bundle.Code
	}{
		{"a changed plan", replace(tamperedPlans(t), false), bundle.CodeDigest},
		{"no plans.bin", replace(nil, true), bundle.CodeMissingFile},
		{"plans.bin the manifest does not list", edit(t, build(t, bundle.BuildOptions{}), func(ms []member) []member {
			return append(ms, member{name: "plans.bin", body: rules.Plans})
		}), bundle.CodeUnlisted},
	} {
		if _, err := bundle.Read(c.archive, bundle.ReadOptions{}); code(err) != c.want {
			t.Errorf("Read of a bundle with %s = %v; want %s", c.what, err, c.want)
		}
	}
	if _, err := bundle.Build(&bytes.Buffer{}, rules.FS, bundle.BuildOptions{Plans: oneVersion}); code(err) != bundle.CodePlansMismatch {
		t.Errorf("Build with the plans of one version of many = %v; want %s", err, bundle.CodePlansMismatch)
	}

	b, err := bundle.Read(build(t, bundle.BuildOptions{Plans: tamperedPlans(t)}), bundle.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	err = b.CheckPlans(rules.Plans)
	last := b.Manifest.RuleSets[len(b.Manifest.RuleSets)-1]
	if e, ok := err.(*bundle.Error); !ok || e.Code != bundle.CodePlansMismatch || e.Path != "plans.bin" || !bytes.Contains([]byte(e.Message), []byte("plan of "+last+" ")) {
		t.Errorf("CheckPlans of a changed plan = %v; want %s at plans.bin naming %s", err, bundle.CodePlansMismatch, last)
	}
}
