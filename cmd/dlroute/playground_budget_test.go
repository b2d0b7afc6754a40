package main

import (
	"strings"
	"testing"

	"github.com/dlroute/dlroute/internal/testkit/ruletest"
)

// TestPlaygroundListensWhileChecking: `dlroute playground --rules DIR`,
// where DIR's check would take minutes, listens without waiting for it
// (firstCheckWait, here none), serving the rules as they are; a fix
// written meanwhile cancels that check and is published, and the slow
// rules are never refused: their check did not run to its budget.
func TestPlaygroundListensWhileChecking(t *testing.T) {
	saved := firstCheckWait
	firstCheckWait = 0
	t.Cleanup(func() { firstCheckWait = saved })
	dir := t.TempDir()
	if err := ruletest.WriteDir(dir, ruletest.WithSlowTests()); err != nil {
		t.Fatal(err)
	}
	url, log := servePlaygroundLog(t, "--rules", dir)
	if !strings.Contains(log.String(), "is still being checked") {
		t.Errorf("the start's warning: %q", log.String())
	}
	served := servedRules(t, url)
	if served.Revision != "" || !strings.Contains(served.Files["jax/v3/rules.yaml"], "slow-0") {
		t.Fatalf("rules.json while the first check runs: revision %q; want the rules as they are, with no revision", served.Revision)
	}
	events := listenEvents(t, url)
	if e := events.next(t); e.name != "rules" {
		t.Fatalf("first event %+v, want rules", e)
	}

	if err := ruletest.WriteDir(dir, ruletest.Rules()); err != nil {
		t.Fatal(err)
	}
	e := events.next(t)
	served = servedRules(t, url)
	if e.name != "rules" || served.Revision == "" || strings.Contains(served.Files["jax/v3/rules.yaml"], "slow-0") {
		t.Fatalf("after the fix: %+v, rules.json revision %q; want the fixed rules published", e, served.Revision)
	}
	if strings.Contains(log.String(), "refused") {
		t.Errorf("the slow rules were refused, so their check ran to its end before the fix: %q", log.String())
	}
}
