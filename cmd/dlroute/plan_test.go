package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/dlroute/dlroute/internal/testkit/ruletest"
	"github.com/dlroute/dlroute/plan"
	"github.com/dlroute/dlroute/rules"
)

// TestPlanEmbedded: `dlroute plan` writes rules/plans.bin byte for byte,
// and plan REF... the plans of the versions named, each once, as -o FILE.
func TestPlanEmbedded(t *testing.T) {
	stdout, stderr, status := runDlroute(t, "plan")
	if status != 0 || stderr != "" || stdout != string(rules.Plans) {
		t.Fatalf("dlroute plan: status %d, %d bytes, stderr %q; want 0, rules/plans.bin's %d bytes", status, len(stdout), stderr, len(rules.Plans))
	}

	// The null device is a character device, as a terminal is; plans
	// are written to it, not refused.
	null, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer null.Close()
	var errOut strings.Builder
	if status := run([]string{"plan", "jax@v3"}, nil, null, &errOut); status != 0 {
		t.Errorf("dlroute plan jax@v3 > %s: status %d, %s; want 0", os.DevNull, status, errOut.String())
	}

	out := filepath.Join(t.TempDir(), "plans.bin")
	stdout, stderr, status = runDlroute(t, "plan", "jax", "-o", out, "numpy@v2", "jax@v3")
	if status != 0 || stderr != "" || stdout != out+": 2 plans, jax@v3 numpy@v2\n" {
		t.Fatalf("dlroute plan jax -o FILE numpy@v2 jax@v3: status %d, stdout %q, stderr %q", status, stdout, stderr)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	got, err := plan.DecodeSet(data)
	if err != nil {
		t.Fatal(err)
	}
	all, _ := plan.DecodeSet(rules.Plans)
	want := slices.DeleteFunc(all, func(e plan.Entry) bool { return e.Ref != "jax@v3" && e.Ref != "numpy@v2" })
	if !slices.EqualFunc(got, want, func(a, b plan.Entry) bool { return a.Ref == b.Ref && string(a.Plan) == string(b.Plan) }) {
		t.Errorf("plan jax numpy@v2 jax@v3 wrote %d plans; want rules/plans.bin's of jax@v3 and numpy@v2", len(got))
	}
}

// TestPlanRefuses: a rules folder with an expression no plan holds is
// refused with the error at its position and nothing written; a ref
// that names no version gets the error that lists the versions; a bad
// flag is a usage error.
func TestPlanRefuses(t *testing.T) {
	dir := t.TempDir()
	if err := ruletest.WriteDir(dir, planUnsupported(t)); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "plans.bin")
	stdout, stderr, status := runDlroute(t, "plan", "--rules", dir, "-o", out)
	pos := filepath.Join(dir, "jax", "v3", "rules.yaml") + ":52:42: "
	if status != 1 || stdout != "" || !strings.HasPrefix(stderr, "error: "+pos) || !strings.Contains(stderr, "\nhint: ") {
		t.Errorf("plan --rules of a version no plan holds: status %d, stdout %q, stderr:\n%s\nwant 1, error: %s... with a hint", status, stdout, stderr, pos)
	}
	if _, err := os.Stat(out); err == nil {
		t.Error("plan wrote -o FILE for rules it refused")
	}
	// Only the versions asked: jax@v2 beside it plans.
	if stdout, stderr, status := runDlroute(t, "plan", "--rules", dir, "jax@v2"); status != 0 || len(stdout) == 0 {
		t.Errorf("plan --rules DIR jax@v2 beside a version no plan holds: status %d, stderr %s", status, stderr)
	}

	for _, c := range []struct {
		args   []string
		status int
		stderr []string
	}{
		{[]string{"plan", "jax@v9"}, 1, []string{`error: rule set jax has no version "v9"`, "\nhint: versions: "}},
		{[]string{"plan", "nosuch"}, 1, []string{`error: no rule set "nosuch"`, "\nhint: loaded: "}},
		{[]string{"plan", "--out", "x"}, 2, []string{"error: flag provided but not defined: -out", "\nhint: "}},
	} {
		stdout, stderr, status := runDlroute(t, c.args...)
		for _, s := range c.stderr {
			if status != c.status || stdout != "" || !strings.Contains(stderr, s) {
				t.Errorf("dlroute %s: status %d, stdout %d bytes, stderr:\n%s\nwant %d, %q", strings.Join(c.args, " "), status, len(stdout), stderr, c.status, s)
			}
		}
	}
}
