package engine_test

import (
	"context"
	"testing"

	"github.com/dlroute/dlroute/engine"
)

// TestLoadRefusesStringBombs puts into jax@v3 a rule that builds a string
// larger than the cost limit from inputs of MaxStringLen (issue 12): Load
// refuses it with CodeCostLimit at the call that builds it.
func TestLoadRefusesStringBombs(t *testing.T) {
	const rulesFile = "jax/v3/rules.yaml"
	tests := []struct {
		name, when string
		at         string // the error points at the first occurrence of this text
	}{
		{"replace twice", "platform == 'evil' && platform_version.replace('', platform_version).replace('', platform_version) == ''", "('', platform_version).replace"},
		{"replace once", "platform_version.replace('', platform_version).size() > 0", "('', platform_version).size"},
		{"join of a split", "platform_version.split('').join(platform_version) == ''", "(platform_version) =="},
		{"join of many references", "platform_version.split('').map(c, platform_version).join() == ''", "() =="},
		{"format of a list", "'%s'.format([gpu_markers.map(m, gpu_markers.map(n, platform_version))]) == ''", "([gpu"},
		{"format of a replace", "'%s'.format([platform_version.replace('', platform_version)]) == ''", "('', platform_version)]"},
		{"quote of a replace", "strings.quote(platform_version.replace('', platform_version)) == ''", "('', platform_version))"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fsys := versionFS(t, "v3")
			text := edit(t, fsys, rulesFile, "when: platform == 'cpu'", `when: "`+tt.when+`"`)
			cat, err := engine.Load(fsys, engine.Options{})
			if cat != nil || err == nil {
				t.Fatalf("Load accepted %s", tt.when)
			}
			errs := engine.Errors(err)
			if len(errs) != 1 || errs[0].Code != engine.CodeCostLimit {
				t.Fatalf("Load(%s) got %v, want one %s", tt.when, err, engine.CodeCostLimit)
			}
			line, col := positionOf(t, text, tt.at)
			if p := errs[0].Pos; p == nil || p.File != "rules/"+rulesFile || p.Line != line || p.Column != col {
				t.Errorf("error at %v, want rules/%s:%d:%d (at %q):\n%v", p, rulesFile, line, col, tt.at, errs[0])
			}
		})
	}
}

// TestLoadAcceptsBoundedStrings: the string functions stay usable where
// what they build fits the cost limit on inputs of MaxStringLen.
func TestLoadAcceptsBoundedStrings(t *testing.T) {
	for _, when := range []string{
		"platform_version.replace('-', '_') == 'cuda_12'",
		"platform_version.replace('cuda', 'CUDA', 1).lowerAscii() == 'cuda 12'",
		"[platform, platform_version].join(' ') == 'gpu cuda'",
		"gpu_markers.map(m, m.marker).join(', ') != ''",
		"'%s on %s (%d shards)'.format([platform, platform_version, shards]) != ''",
		"strings.quote(platform_version) != ''",
		"platform_version.split(' ').size() > 1",
	} {
		fsys := versionFS(t, "v3")
		edit(t, fsys, "jax/v3/rules.yaml", "when: platform == 'cpu'", `when: "`+when+` || platform == 'cpu'"`)
		if _, err := engine.Load(fsys, engine.Options{}); err != nil {
			t.Errorf("Load refused %s:\n%v", when, err)
		}
	}
}

// TestEmbeddedRulesPassUnderStringLimits: every embedded rule set loads
// with the string bounds and passes its own tests.
func TestEmbeddedRulesPassUnderStringLimits(t *testing.T) {
	cat := loadEmbedded(t, engine.Options{})
	for _, rs := range cat.RuleSets() {
		for _, r := range rs.Test(context.Background()) {
			if !r.Pass {
				t.Errorf("%s: %s: Resolve(%v) got %v (err %v), want %v", rs.Ref(), r.Name, r.Input, r.Got, r.Err, r.Want)
			}
		}
	}
}
