package engine_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/dlroute/dlroute/engine"
)

// TestDeadlineStopsAnExpression: an expression that runs for seconds
// (the cost limit raised so that only the deadline can stop it) stops
// with CodeCanceled soon after its context's deadline, inside the
// expression rather than after it.
func TestDeadlineStopsAnExpression(t *testing.T) {
	fsys := versionFS(t, "v3")
	edit(t, fsys, "jax/v3/rules.yaml", "when: platform == 'cpu'",
		`when: "platform == 'cpu' || platform_version.split('').all(a, platform_version.split('').all(b, a != 'z'))"`)
	cat, err := engine.Load(fsys, engine.Options{SkipTests: true, CostLimit: 1 << 62})
	if err != nil {
		t.Fatal(err)
	}
	rs := ruleSet(t, cat, "jax@v3")
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err = rs.Resolve(ctx, engine.Input{"platform": "evil", "platform_version": strings.Repeat("a", engine.MaxStringLen)})
	d := time.Since(start)
	if errs := engine.Errors(err); len(errs) != 1 || errs[0].Code != engine.CodeCanceled {
		t.Errorf("Resolve got %v, want %s", err, engine.CodeCanceled)
	}
	t.Logf("stopped after %v", d)
	if d > time.Second {
		t.Errorf("Resolve stopped after %v; the deadline was 50 ms", d)
	}
}
