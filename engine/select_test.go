package engine_test

import (
	"errors"
	"slices"
	"testing"
	"testing/fstest"

	"github.com/dlroute/dlroute/engine"
	"github.com/dlroute/dlroute/internal/testkit/ruletest"
	"github.com/dlroute/dlroute/rules"
)

func refsOf(cat *engine.Catalog) []string {
	var out []string
	for _, rs := range cat.RuleSets() {
		out = append(out, rs.Ref())
	}
	slices.Sort(out)
	return out
}

// TestSelect: only the versions named and those they import compile.
func TestSelect(t *testing.T) {
	for _, c := range []struct {
		sel  []string
		want []string
	}{
		{[]string{"jax"}, []string{"jax@v3"}},
		{[]string{"jax@v1"}, []string{"jax@v1"}},
		{[]string{"exchange"}, []string{"exchange@v2", "jax@v3"}},
		{[]string{"exchange@v1", "jax@v2"}, []string{"exchange@v1", "jax@v2", "jax@v3"}},
		{[]string{"jax-export@*"}, []string{"jax-export@v0.1", "jax-export@v0.1.1", "jax-export@v0.10", "jax-export@v0.2", "jax-export@v0.3", "jax-export@v0.4", "jax-export@v0.5", "jax-export@v1", "jax-export@v2"}},
		{[]string{"jax", "nosuchlib@*"}, []string{"jax@v3"}}, // every version of none is none
	} {
		cat, err := engine.Load(rules.FS, engine.Options{Select: c.sel, Cache: embeddedCache})
		if err != nil {
			t.Fatalf("Load(Select %v): %v", c.sel, err)
		}
		if got := refsOf(cat); !slices.Equal(got, c.want) {
			t.Errorf("Load(Select %v) compiled %v, want %v", c.sel, got, c.want)
		}
	}
}

// TestSelectMissing: a ref that names nothing gets the error
// Catalog.RuleSet gives on the whole catalog.
func TestSelectMissing(t *testing.T) {
	whole := loadEmbedded(t, engine.Options{})
	for _, ref := range []string{"jax@v99", "nosuch", "nosuch@v1"} {
		_, want := whole.RuleSet(ref)
		_, got := engine.Load(rules.FS, engine.Options{Select: []string{ref}})
		var w *engine.Error
		if !errors.As(want, &w) {
			t.Fatalf("RuleSet(%s): %v, not an *engine.Error", ref, want)
		}
		list := engine.Errors(got)
		if len(list) != 1 || list[0].Code != w.Code || list[0].Message != w.Message || list[0].Hint != w.Hint {
			t.Errorf("Load(Select %s) = %v, want %v (hint %q)", ref, got, want, w.Hint)
		}
	}
}

// TestSelectSkipsOthersErrors: an error in a version not selected, nor
// imported, is not compiled and so not reported.
func TestSelectSkipsOthersErrors(t *testing.T) {
	broken := ruletest.Rules()
	broken["jax/v1/rules.yaml"] = &fstest.MapFile{Data: []byte("rules: [")}
	if _, err := engine.Load(broken, engine.Options{}); err == nil {
		t.Fatal("the broken jax@v1 loads")
	}
	cat, err := engine.Load(broken, engine.Options{Select: []string{"exchange"}})
	if err != nil {
		t.Fatalf("Load(Select exchange) with jax@v1 broken: %v", err)
	}
	if got := refsOf(cat); !slices.Equal(got, []string{"exchange@v2", "jax@v3"}) {
		t.Errorf("compiled %v", got)
	}
	if _, err := engine.Load(broken, engine.Options{Select: []string{"jax@v1"}}); err == nil {
		t.Error("Load(Select jax@v1) with jax@v1 broken: no error")
	}
}
