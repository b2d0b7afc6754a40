package engine_test

import (
	"strings"
	"testing"
	"testing/fstest"

	"github.com/dlroute/dlroute/engine"
)

// TestOverlappingReleases: two versions whose mirrors.releases share a
// release are refused at load, at the newer version's releases key, with
// a hint naming the older version and its range; ranges that touch
// without sharing load, and jax==RELEASE finds each.
func TestOverlappingReleases(t *testing.T) {
	for _, c := range []struct {
		name   string
		v1, v2 string // mirrors.releases of lib@v1 and lib@v2
		want   string // the message; "" when the versions load
		hint   string
	}{
		{"v2 starts inside v1", ` {first: "1.0", last: "1.4", checked: {"1.4": run}}`, ` {first: "1.4", last: "2.0", checked: {"2.0": run}}`,
			"releases 1.4 to 2.0 overlap lib@v1's, 1.0 to 1.4: lib==1.4 would name both",
			"lib@v1 covers 1.0 to 1.4: a release is claimed by one version"},
		{"v2 inside v1", ` {first: "1.0", last: "3.0", checked: {"3.0": run}}`, ` {first: "2.0", last: "2.0", checked: {"2.0": run}}`,
			"releases 2.0 only overlap lib@v1's, 1.0 to 3.0: lib==2.0 would name both", "lib@v1 covers 1.0 to 3.0"},
		{"the same release spelt two ways", ` {first: "1.0", last: "1.1", checked: {"1.1": run}}`, ` {first: "1.1.0", last: "1.2", checked: {"1.2": run}}`,
			"releases 1.1.0 to 1.2 overlap lib@v1's, 1.0 to 1.1: lib==1.1.0 would name both", "lib@v1 covers 1.0 to 1.1"},
		{"v2 older than v1", ` {first: "2.0", last: "2.5", checked: {"2.5": run}}`, ` {first: "1.0", last: "2.0", checked: {"2.0": run}}`,
			"releases 1.0 to 2.0 overlap lib@v1's, 2.0 to 2.5: lib==2.0 would name both", "lib@v1 covers 2.0 to 2.5"},
		{"adjacent", ` {first: "1.0", last: "1.4", checked: {"1.4": run}}`, ` {first: "1.4.1", last: "2.0", checked: {"2.0": run}}`, "", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			fsys := fstest.MapFS{}
			copyVersion(t, fsys, "lib", "v1", c.v1)
			copyVersion(t, fsys, "lib", "v2", c.v2)
			cat, err := engine.Load(fsys, engine.Options{})
			if c.want == "" {
				if err != nil {
					t.Fatalf("Load: %v", err)
				}
				for ref, want := range map[string]string{"lib==1.4": "lib@v1", "lib==1.4.1": "lib@v2"} {
					if rs, err := cat.RuleSet(ref); err != nil || rs.Ref() != want {
						t.Errorf("RuleSet(%q) = %v, %v; want %s", ref, rs, err, want)
					}
				}
				return
			}
			errs := engine.Errors(err)
			if len(errs) != 1 {
				t.Fatalf("Load: got %v, want one %s error", err, engine.CodeOverlapping)
			}
			e := errs[0]
			line, col := positionOf(t, string(fsys["lib/v2/manifest.yaml"].Data), "releases:")
			if e.Code != engine.CodeOverlapping || e.Pos == nil || *e.Pos != (engine.Position{File: "rules/lib/v2/manifest.yaml", Line: line, Column: col}) {
				t.Fatalf("Load: got %s at %v, want %s at rules/lib/v2/manifest.yaml:%d:%d", e.Code, e.Pos, engine.CodeOverlapping, line, col)
			}
			if e.Message != c.want || !strings.HasPrefix(e.Hint, c.hint) || !strings.HasPrefix(e.Source, "  releases:") {
				t.Errorf("Load:\n message %q\n    want %q\n hint    %q\n    want %q...\n source  %q", e.Message, c.want, e.Hint, c.hint, e.Source)
			}
		})
	}
}
