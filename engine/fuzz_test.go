package engine_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/dlroute/dlroute/engine"
)

// FuzzLoad feeds arbitrary rules.yaml text to the loader (the other three
// files of jax@v3 stay as they are). Load must never panic; it either
// compiles the version or refuses it with errors that have a code and point
// inside the file; what it compiles must resolve its own cases.
// Seeds: testdata/fuzz/FuzzLoad.
func FuzzLoad(f *testing.F) {
	base := versionFS(f, "v3")
	f.Add(base["jax/v3/rules.yaml"].Data)
	f.Fuzz(func(t *testing.T, rulesYAML []byte) {
		fsys := versionFS(t, "v3")
		fsys["jax/v3/rules.yaml"].Data = rulesYAML
		cat, err := engine.Load(fsys, engine.Options{})
		if err != nil {
			// Lines end as YAML ends them: "\n", "\r\n" or "\r" alone.
			lines := strings.Count(strings.ReplaceAll(string(rulesYAML), "\r\n", "\n"), "\n") +
				strings.Count(strings.ReplaceAll(string(rulesYAML), "\r\n", "\n"), "\r") + 1
			for _, e := range engine.Errors(err) {
				if e.Code == "" || e.Message == "" {
					t.Fatalf("error without code or message: %#v", e)
				}
				if e.Pos != nil && e.Pos.File == "rules/jax/v3/rules.yaml" && e.Pos.Line > lines {
					t.Fatalf("error at line %d of a %d-line file: %v", e.Pos.Line, lines, e)
				}
			}
			return
		}
		for _, rs := range cat.RuleSets() {
			rs.Test(context.Background())
		}
	})
}

// FuzzDecodeInput feeds arbitrary lines to `resolve --json`'s decoder. A
// line it accepts must resolve without an input error, and must decide the
// same after a trip through JSON. Seeds: testdata/fuzz/FuzzDecodeInput.
func FuzzDecodeInput(f *testing.F) {
	f.Add([]byte(`{"platform":"gpu","platform_version":"cuda 12030","memory_kind":"device","local_hardware_id":0,"shards":1}`))
	rs := ruleSet(f, loadEmbedded(f, engine.Options{MemoSize: 64}), "jax")
	f.Fuzz(func(t *testing.T, line []byte) {
		in, err := rs.DecodeInput(line)
		if err != nil {
			if len(engine.Errors(err)) != 1 {
				t.Fatalf("DecodeInput error is not an *engine.Error: %v", err)
			}
			return
		}
		d, err := rs.Resolve(context.Background(), in)
		if err != nil {
			t.Fatalf("DecodeInput accepted %q but Resolve failed: %v", line, err)
		}
		again, err := json.Marshal(in)
		if err != nil {
			t.Fatal(err)
		}
		in2, err := rs.DecodeInput(again)
		if err != nil {
			t.Fatalf("re-encoded input %s is refused: %v", again, err)
		}
		if d2, err := rs.Resolve(context.Background(), in2); err != nil || !d2.Equal(d) {
			t.Fatalf("input %q decides %v, after JSON %v (%v)", line, d, d2, err)
		}
	})
}
