package engine

import (
	"os"
	"testing"
)

// testRuleSet loads the embedded jax rule set for internal tests (the rules
// package imports nothing of engine, so the directory is read from disk).
func testRuleSet(t *testing.T) *RuleSet {
	t.Helper()
	cat, err := Load(os.DirFS("../rules"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	rs, err := cat.RuleSet("jax@v3")
	if err != nil {
		t.Fatal(err)
	}
	return rs
}
