package wasmhost

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/dlroute/dlroute/engine"
	"github.com/dlroute/dlroute/internal/testkit/ruletest"
	"github.com/dlroute/dlroute/wasmhost"
)

// nestRules copies the shipped jax@v3 into a temporary folder with n
// rules first in its rules.yaml, each six exists nested (about 80
// expression nodes), and returns the folder and the line of the first
// added rule's when; each rule is three lines.
func nestRules(t *testing.T, n int) (string, int) {
	t.Helper()
	var added strings.Builder
	for i := range n {
		cond := fmt.Sprintf("f == %d", i+2)
		for _, v := range []string{"f", "e", "d", "c", "b", "a"} {
			cond = fmt.Sprintf("[1].exists(%s, %s)", v, cond)
		}
		fmt.Fprintf(&added, "  - id: nest-%d\n    when: \"%s\"\n    device: {type: kDLCPU, id: 0}\n", i, cond)
	}
	dir := t.TempDir()
	line, err := ruletest.WriteWithRulesFirst(dir, added.String())
	if err != nil {
		t.Fatal(err)
	}
	return dir, line + 1 // the first rule's when
}

// TestLoadBudgetIsTheSameInTheModule: rules just under engine.MaxLoadNodes
// load natively and in the module (in its default 128 MiB), and rules
// just over it are refused by both, with the same code at the same place.
// The core checks the native budget (engine); loading some 1,500 rules
// into the module is the e2e tier's.
func TestLoadBudgetIsTheSameInTheModule(t *testing.T) {
	ctx := context.Background()
	// Where the budget is crossed, natively: at rule k.
	probe, first := nestRules(t, engine.MaxLoadNodes/60)
	_, err := engine.Load(os.DirFS(probe), engine.Options{})
	errs := engine.Errors(err)
	if len(errs) != 1 || errs[0].Code != engine.CodeLoadTooLarge {
		t.Fatalf("native Load of %d rules: got %v, want %s", engine.MaxLoadNodes/60, err, engine.CodeLoadTooLarge)
	}
	k := (errs[0].Pos.Line - first) / 3

	under, _ := nestRules(t, k-5)
	if _, err := engine.Load(os.DirFS(under), engine.Options{}); err != nil {
		t.Fatalf("native Load of %d rules: %v", k-5, err)
	}
	r, err := wasmhost.NewRunner(ctx, wasmhost.RunnerConfig{Module: module, Instances: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close(ctx)
	if err := r.Load(ctx, os.DirFS(under)); err != nil {
		t.Fatalf("the module's Load of %d rules, just under the budget: %v", k-5, err)
	}
	rs, err := r.RuleSet(ctx, "jax")
	if err != nil {
		t.Fatal(err)
	}
	if d, err := rs.Resolve(ctx, engine.Input{"platform": "cpu", "platform_version": "x"}); err != nil || d.Rule != "cpu" {
		t.Errorf("the module decided %v, %v; want rule cpu", d, err)
	}

	over, _ := nestRules(t, k+5)
	_, native := engine.Load(os.DirFS(over), engine.Options{})
	guest := r.Load(ctx, os.DirFS(over))
	n, g := engine.Errors(native), engine.Errors(guest)
	if len(n) != 1 || len(g) != 1 || n[0].Code != engine.CodeLoadTooLarge || g[0].Code != n[0].Code || *g[0].Pos != *n[0].Pos {
		t.Fatalf("just over the budget: native %v, module %v; want one %s at the same place", native, guest, engine.CodeLoadTooLarge)
	}
	// The rules in service stay.
	if d, err := rs.Resolve(ctx, engine.Input{"platform": "tpu", "platform_version": "x", "memory_kind": "pinned_host"}); err != nil || d.Rule == "" {
		t.Errorf("after the refusal the module decided %v, %v", d, err)
	}
}
