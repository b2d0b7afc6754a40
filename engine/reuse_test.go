package engine_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/dlroute/dlroute/engine"
	"github.com/dlroute/dlroute/rules"
)

// edited is the embedded rules with one file's text changed.
func edited(t testing.TB, name, old, new string) fstest.MapFS {
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
	before := loadEmbedded(t, engine.Options{})
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

// BenchmarkLoadEdit is the playground's keystroke: exchange@v2 and what
// it imports loaded again after an edit of one expression in its
// rules.yaml (a different edit each time, as typing makes), "cold" from
// nothing, "reuse" with the catalog before (jax@v3 taken as it is), and
// "reuse+cache" with an engine.Cache too (every other expression and the
// unchanged files taken from it).
func BenchmarkLoadEdit(b *testing.B) {
	only := func(fsys fstest.MapFS) fstest.MapFS {
		out := fstest.MapFS{}
		for p, f := range fsys {
			if strings.HasPrefix(p, "exchange/v2/") || strings.HasPrefix(p, "jax/v3/") {
				out[p] = f
			}
		}
		return out
	}
	const message = "' values'"
	base := only(edited(b, "exchange/v2/rules.yaml", message, message))
	edits := make([]fstest.MapFS, 64)
	for i := range edits {
		edits[i] = only(edited(b, "exchange/v2/rules.yaml", message, fmt.Sprintf("' values (%d)'", i)))
	}
	for _, c := range []struct {
		name         string
		reuse, cache bool
	}{{"cold", false, false}, {"reuse", true, false}, {"reuse+cache", true, true}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			opts := engine.Options{}
			if c.cache {
				opts.Cache = engine.NewCache()
			}
			prev, err := engine.Load(base, opts)
			if err != nil {
				b.Fatal(err)
			}
			i := 0
			for b.Loop() {
				if c.reuse {
					opts.Reuse = prev
				}
				if prev, err = engine.Load(edits[i%len(edits)], opts); err != nil {
					b.Fatal(err)
				}
				i++
			}
		})
	}
}

// BenchmarkLoadKey is a key typed into jax@v3's marker table in the
// playground, which loads jax/v3 again on each: a row half typed (the
// YAML does not parse, as on most keys) or whole, a different one each
// time, with a Cache and the catalog before, as the page's module loads.
// "parsed" sends the served rules' ParsedFile with every edit, as the
// page does (engine.Options.TrustParsed); "text" sends none, the floor:
// what the ParsedFile costs a key beside what it saves.
func BenchmarkLoadKey(b *testing.B) {
	const row = "{marker: oneapi, device: kDLOneAPI}"
	parsed, err := fs.ReadFile(rules.FS, engine.ParsedFile)
	if err != nil {
		b.Fatal(err)
	}
	dir := func(rowText string, withParsed bool) fstest.MapFS {
		out := fstest.MapFS{}
		for p, f := range edited(b, "jax/v3/rules.yaml", row, row+rowText) {
			if strings.HasPrefix(p, "jax/v3/") {
				out[p] = f
			}
		}
		if withParsed {
			out[engine.ParsedFile] = &fstest.MapFile{Data: parsed}
		}
		return out
	}
	for _, typed := range []struct{ name, row string }{
		{"half-row", "\n      - {marker: m%d, dev"},
		{"whole-row", "\n      - {marker: m%d, device: kDLCUDA}"},
	} {
		for _, withParsed := range []bool{true, false} {
			name := typed.name + "/text"
			if withParsed {
				name = typed.name + "/parsed"
			}
			b.Run(name, func(b *testing.B) {
				edits := make([]fstest.MapFS, 64)
				for i := range edits {
					edits[i] = dir(fmt.Sprintf(typed.row, i), withParsed)
				}
				opts := engine.Options{Cache: engine.NewCache(), TrustParsed: true}
				prev, err := engine.Load(dir("", withParsed), opts)
				if err != nil {
					b.Fatal(err)
				}
				b.ReportAllocs()
				i := 0
				for b.Loop() {
					opts.Reuse = prev
					if cat, err := engine.Load(edits[i%len(edits)], opts); err == nil {
						prev = cat
					}
					i++
				}
			})
		}
	}
}

// A Cache changes how fast Load is, never what it makes: through a run
// of edits, each of which changes what some unchanged expression means
// (a device type's code, an input's type, a value's type, a table's
// size, the cost limit) or breaks and mends the rules, every load with
// the cache (and Reuse) decides every case, and explains it, as a load
// from nothing does, and reports the same errors.
func TestCacheAgreesWithLoadFromNothing(t *testing.T) {
	steps := []struct {
		name    string
		fsys    fs.FS
		opts    engine.Options
		wantErr bool
	}{
		{"as embedded", rules.FS, engine.Options{}, false},
		{"a new device type code", edited(t, "jax/v3/device_types.yaml", "kDLCUDA: 2", "kDLCUDA: 99"), engine.Options{}, false},
		{"as embedded again", rules.FS, engine.Options{}, false},
		{"an input's type", edited(t, "jax/v3/rules.yaml", "  platform_version:\n    type: string", "  platform_version:\n    type: dyn"), engine.Options{}, false},
		{"a value's type", edited(t, "exchange/v2/rules.yaml", "unknown_platform: jax.rule == 'gpu-unknown-platform'", `unknown_platform: "jax.rule == 'gpu-unknown-platform' ? 1 : 0"`), engine.Options{}, true},
		{"a table row", edited(t, "jax/v3/rules.yaml", "{marker: oneapi, device: kDLOneAPI}", "{marker: oneapi, device: kDLOneAPI}\n      - {marker: nvforkwithalongername, device: kDLCUDA}"), engine.Options{}, false},
		{"a lower cost limit", rules.FS, engine.Options{CostLimit: 50}, false},
		{"a typo", edited(t, "exchange/v2/rules.yaml", "target_name: \"'('", "target_name: \"'(' + nosuch"), engine.Options{}, true},
		{"as embedded at last", rules.FS, engine.Options{}, false},
	}
	// Every edit is to exchange@v2 or the jax@v3 it imports (no other
	// version imports either): -short loads those two, the full run every
	// version of jax and exchange, the six the edits leave unchanged
	// reused beside them. Every shipped set took 25 s (issue 36).
	only := []string{"jax@*", "exchange@*"}
	if testing.Short() {
		only = []string{"exchange@v2"}
	}
	cache := engine.NewCache()
	var prev *engine.Catalog
	for _, s := range steps {
		s.opts.Select = only
		fresh, freshErr := engine.Load(s.fsys, s.opts)
		opts := s.opts
		opts.Cache, opts.Reuse = cache, prev
		cached, cachedErr := engine.Load(s.fsys, opts)
		if fmt.Sprint(freshErr) != fmt.Sprint(cachedErr) {
			t.Fatalf("%s: errors differ\nfrom nothing: %v\ncached:       %v", s.name, freshErr, cachedErr)
		}
		if (freshErr != nil) != s.wantErr {
			t.Fatalf("%s: Load says %v; want an error %v", s.name, freshErr, s.wantErr)
		}
		if freshErr != nil {
			continue
		}
		prev = cached
		for _, rs := range fresh.RuleSets() {
			other, err := cached.RuleSet(rs.Ref())
			if err != nil {
				t.Fatal(err)
			}
			want, got := rs.Test(context.Background()), other.Test(context.Background())
			for i := range want {
				w, g := fmt.Sprint(want[i].Got, want[i].Err, want[i].Pass), fmt.Sprint(got[i].Got, got[i].Err, got[i].Pass)
				if w != g {
					t.Errorf("%s: %s case %s: cached %s, from nothing %s", s.name, rs.Ref(), want[i].Name, g, w)
				}
				we, _ := rs.Explain(context.Background(), want[i].Input)
				ge, _ := other.Explain(context.Background(), want[i].Input)
				wj, _ := json.Marshal(we)
				gj, _ := json.Marshal(ge)
				if string(wj) != string(gj) {
					t.Errorf("%s: %s case %s: explanations differ\ncached:       %s\nfrom nothing: %s", s.name, rs.Ref(), want[i].Name, gj, wj)
				}
			}
		}
	}
}
