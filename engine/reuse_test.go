package engine_test

import (
	"io/fs"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/dlroute/dlroute/engine"
	"github.com/dlroute/dlroute/rules"
)

// edited is the embedded rules with one file's text changed.
func edited(t *testing.T, name, old, new string) fstest.MapFS {
	t.Helper()
	out := fstest.MapFS{}
	err := fs.WalkDir(rules.FS, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		data, err := fs.ReadFile(rules.FS, p)
		if p == name {
			if !strings.Contains(string(data), old) {
				t.Fatalf("%s holds no %q", name, old)
			}
			data = []byte(strings.Replace(string(data), old, new, 1))
		}
		out[p] = &fstest.MapFile{Data: data}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestLoadReuse(t *testing.T) {
	before, err := engine.Load(rules.FS, engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	same := func(cat *engine.Catalog, ref string) bool {
		a, _ := before.RuleSet(ref)
		b, err := cat.RuleSet(ref)
		if err != nil {
			t.Fatal(err)
		}
		return a == b
	}
	for _, c := range []struct {
		name     string
		fsys     fs.FS
		opts     engine.Options
		reused   []string
		compiled []string
	}{
		{"an exchange edit reuses what it imports",
			edited(t, "exchange/v2/rules.yaml", "rules:\n", "rules:\n  # a comment\n"), engine.Options{Reuse: before},
			[]string{"jax@v1", "jax@v2", "jax@v3", "exchange@v1"}, []string{"exchange@v2"}},
		{"an edit of an import compiles its importers again",
			edited(t, "jax/v3/rules.yaml", "{marker: oneapi,", "{marker: oneAPI,"), engine.Options{Reuse: before},
			[]string{"jax@v1", "jax@v2"}, []string{"jax@v3", "exchange@v1", "exchange@v2"}},
		{"other options compile everything",
			rules.FS, engine.Options{Reuse: before, Root: "elsewhere"},
			nil, []string{"jax@v1", "jax@v2", "jax@v3", "exchange@v1", "exchange@v2"}},
		{"no Reuse compiles everything",
			rules.FS, engine.Options{},
			nil, []string{"jax@v3", "exchange@v2"}},
	} {
		cat, err := engine.Load(c.fsys, c.opts)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		for _, ref := range c.reused {
			if !same(cat, ref) {
				t.Errorf("%s: %s was compiled again, want it reused", c.name, ref)
			}
		}
		for _, ref := range c.compiled {
			if same(cat, ref) {
				t.Errorf("%s: %s was reused, want it compiled again", c.name, ref)
			}
		}
	}
}
