package wasmhost

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/dlroute/dlroute/engine"
	"github.com/dlroute/dlroute/internal/testkit/ruletest"
	"github.com/dlroute/dlroute/rules"
	"github.com/dlroute/dlroute/wasmhost"
)

// nestRules copies the shipped jax@v3 into a temporary folder with n
// rules first in its rules.yaml, each six exists nested (about 80
// expression nodes), and returns the folder and the line of the first
// added rule's when; each rule is three lines.
func nestRules(t testing.TB, n int) (string, int) {
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
// load natively and in the module (in its default memory,
// wasmhost.DefaultMemoryLimitPages), and rules just over it are refused by
// both, with the same code at the same place. The core checks the native
// budget (engine); loading some 2,600 rules into the module is the e2e
// tier's.
func TestLoadBudgetIsTheSameInTheModule(t *testing.T) {
	ctx := context.Background()
	// Each step a subtest, which the test command prints as it ends: the
	// module's loads take most of a minute each on a busy machine.
	var k int
	var under string // in the test's own directory, which outlives the step
	top := t
	ok := t.Run("native", func(t *testing.T) {
		// Where the budget is crossed, natively: at rule k.
		probe, first := nestRules(t, engine.MaxLoadNodes/60)
		_, err := engine.Load(os.DirFS(probe), engine.Options{})
		errs := engine.Errors(err)
		if len(errs) != 1 || errs[0].Code != engine.CodeLoadTooLarge {
			t.Fatalf("native Load of %d rules: got %v, want %s", engine.MaxLoadNodes/60, err, engine.CodeLoadTooLarge)
		}
		k = (errs[0].Pos.Line - first) / 3
		under, _ = nestRules(top, k-5)
		if _, err := engine.Load(os.DirFS(under), engine.Options{}); err != nil {
			t.Fatalf("native Load of %d rules: %v", k-5, err)
		}
	})
	if !ok {
		return
	}
	r, err := wasmhost.NewRunner(ctx, wasmhost.RunnerConfig{Module: module, Instances: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close(ctx)
	var rs *wasmhost.RuleSet
	if !t.Run("module, just under", func(t *testing.T) {
		if err := r.Load(ctx, os.DirFS(under)); err != nil {
			t.Fatalf("the module's Load of %d rules, just under the budget: %v", k-5, err)
		}
		if rs, err = r.RuleSet(ctx, "jax"); err != nil {
			t.Fatal(err)
		}
		if d, err := rs.Resolve(ctx, engine.Input{"platform": "cpu", "platform_version": "x"}); err != nil || d.Rule != "cpu" {
			t.Errorf("the module decided %v, %v; want rule cpu", d, err)
		}
	}) {
		return
	}
	t.Run("both, just over", func(t *testing.T) {
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
	})
}

// copyVersions writes the shipped rules into a temporary folder with n
// copies of the shipped version from (such as "torch/v3") beside them,
// versions v9000 on, each with no releases of its own: a folder grown as
// the shipped rules grow, by versions like theirs.
func copyVersions(t testing.TB, from string, n int) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.CopyFS(dir, rules.FS); err != nil {
		t.Fatal(err)
	}
	set, _, _ := strings.Cut(from, "/")
	for i := range n {
		v := fmt.Sprintf("v%d", 9000+i)
		vdir := filepath.Join(dir, set, v)
		if err := os.CopyFS(vdir, os.DirFS(filepath.Join(dir, from))); err != nil {
			t.Fatal(err)
		}
		os.RemoveAll(filepath.Join(vdir, "evidence"))
		path := filepath.Join(vdir, engine.ManifestFile)
		text, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		var kept []string
		skip := false
		for _, line := range strings.Split(string(text), "\n") {
			switch {
			case strings.HasPrefix(line, "version: "):
				line = "version: " + v
			case strings.HasPrefix(line, "  releases:"), strings.HasPrefix(line, "  commits:"):
				skip = true
				continue
			case skip && strings.HasPrefix(line, "    "):
				continue
			}
			skip = false
			kept = append(kept, line)
		}
		if err := os.WriteFile(path, []byte(strings.Join(kept, "\n")), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// underBudget returns a folder of rules just under engine.MaxLoadNodes
// in one shape: "nests", jax@v3 with six-deep nests first; "versions",
// the shipped rules with copies of torch@v3.
func underBudget(t testing.TB, shape string) string {
	t.Helper()
	switch shape {
	case "nests":
		probe, first := nestRules(t, engine.MaxLoadNodes/60)
		k := (refusedAt(t, probe).Line - first) / 3
		dir, _ := nestRules(t, k-5)
		return dir
	case "versions":
		probe := copyVersions(t, "torch/v3", engine.MaxLoadNodes/500)
		var k int
		if _, err := fmt.Sscanf(refusedAt(t, probe).File, "rules/torch/v%d/", &k); err != nil {
			t.Fatal(err)
		}
		return copyVersions(t, "torch/v3", k-9000)
	}
	t.Fatalf("no shape %q", shape)
	return ""
}

// refusedAt is where a native Load of dir is refused with load_too_large.
func refusedAt(t testing.TB, dir string) engine.Position {
	t.Helper()
	_, err := engine.Load(os.DirFS(dir), engine.Options{})
	errs := engine.Errors(err)
	if len(errs) != 1 || errs[0].Code != engine.CodeLoadTooLarge {
		t.Fatalf("native Load: got %v, want %s", err, engine.CodeLoadTooLarge)
	}
	return *errs[0].Pos
}

// BenchmarkLoadAtBudget loads rules just under engine.MaxLoadNodes, in
// each shape, natively and into the module: the native heap kept after a
// collection (native-B), what the load allocated in all (native-alloc-B,
// a bound on its peak), and the smallest instance, in steps of 16 MiB,
// that loads them (guest-min-B), with the guest's GOMEMLIMIT at three
// quarters of it as wasmhost sets it. Minutes: run it with -benchtime 1x.
func BenchmarkLoadAtBudget(b *testing.B) {
	for _, shape := range []string{"nests", "versions"} {
		b.Run(shape, func(b *testing.B) {
			dir := underBudget(b, shape)
			runtime.GC()
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			for b.Loop() {
				c, err := engine.Load(os.DirFS(dir), engine.Options{})
				if err != nil {
					b.Fatal(err)
				}
				runtime.GC()
				runtime.ReadMemStats(&after)
				runtime.KeepAlive(c)
				b.ReportMetric(float64(after.TotalAlloc-before.TotalAlloc), "native-alloc-B")
				b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc), "native-B")
				// The smallest instance that loads them: 16 MiB steps (256
				// pages), between a size that failed and one that loads.
				lo, hi := uint32(0), uint32(wasmhost.DefaultMemoryLimitPages)
				for !loadsIn(b, dir, hi) {
					lo, hi = hi, hi*2
				}
				for hi-lo > 256 {
					if mid := (lo + hi) / 2; loadsIn(b, dir, mid) {
						hi = mid
					} else {
						lo = mid
					}
				}
				b.ReportMetric(float64(hi)*65536, "guest-min-B")
			}
		})
	}
}

// loadsIn reports whether the module loads dir in an instance of pages.
func loadsIn(t testing.TB, dir string, pages uint32) bool {
	ctx := context.Background()
	r, err := wasmhost.NewRunner(ctx, wasmhost.RunnerConfig{Module: module, Instances: 1, MemoryLimitPages: pages})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close(ctx)
	err = r.Load(ctx, os.DirFS(dir))
	if errs := engine.Errors(err); err != nil && (len(errs) != 1 || errs[0].Code != wasmhost.CodeOutOfMemory) {
		t.Fatalf("the module's Load in %d pages: %v", pages, err)
	}
	t.Logf("%d MiB: %v", pages/16, err == nil)
	return err == nil
}
