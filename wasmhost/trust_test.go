package wasmhost

import (
	"context"
	"io/fs"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/dlroute/dlroute/engine"
	"github.com/dlroute/dlroute/internal/testkit/ruletest"
	"github.com/dlroute/dlroute/rules"
)

// The module refuses issue 25's pattern when the host loads it, as the
// native engine does, and the rules in service stay.
func TestRunnerLoadRefusesCostlyPattern(t *testing.T) {
	r := newRunner(t, Host{})
	ctx := context.Background()
	fsys := ruletest.Rules()
	f := fsys["jax/v3/rules.yaml"]
	pattern := strings.Repeat(".{0,1000}", 42) + "b"
	f.Data = []byte(strings.Replace(string(f.Data), "when: platform == 'cpu'", `when: "platform == 'evil' && platform_version.matches('`+pattern+`')"`, 1))
	err := r.Load(ctx, fsys)
	if errs := engine.Errors(err); len(errs) != 1 || errs[0].Code != engine.CodeCostLimit {
		t.Fatalf("Load of issue 25's rule: %v, want one %s", err, engine.CodeCostLimit)
	}
	rs, err := r.RuleSet(ctx, "jax")
	if err != nil {
		t.Fatal(err)
	}
	if d, err := rs.Resolve(ctx, engine.Input{"platform": "cpu", "platform_version": "cpu"}); err != nil || d.Rule != "cpu" {
		t.Errorf("after the refused load: %v, %v; want the rule cpu", d, err)
	}
}

// A parsed.bin beside the shipped text (issue 25's: `true` is `false`)
// stays on the host: the module decides a directory by its text, and
// the embedded rules, with their own parsed.bin, alike.
func TestRunnerDirParsedFileIsNotTaken(t *testing.T) {
	needModule(t)
	ctx := context.Background()
	// A runner of its own, the directory its first rules: a guest that
	// compiled the embedded rules first would take `true` from its Cache.
	r, err := NewRunner(ctx, RunnerConfig{Module: module})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close(ctx) })
	backdoor, err := ruletest.Backdoor()
	if err != nil {
		t.Fatal(err)
	}
	dir := ruletest.Rules()
	dir[engine.ParsedFile] = &fstest.MapFile{Data: backdoor}
	mystery := engine.Input{"platform": "mystery", "platform_version": "backdoor 1"}
	for _, c := range []struct {
		name string
		load func(context.Context, fs.FS) error
		fsys fs.FS
	}{
		{"a directory, Load", r.Load, dir},
		{"a directory, LoadLazy", r.LoadLazy, dir},
		{"the embedded rules", r.LoadLazy, rules.FS},
	} {
		if err := c.load(ctx, c.fsys); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		rs, err := r.RuleSet(ctx, "jax@v3")
		if err != nil {
			t.Fatal(err)
		}
		if d, err := rs.Resolve(ctx, mystery); err != nil || d.Rule != "unsupported-platform" {
			t.Errorf("%s: Resolve(%v) got %v, %v; want the catch-all rule unsupported-platform", c.name, mystery, d, err)
		}
	}
}
