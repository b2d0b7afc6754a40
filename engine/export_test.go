package engine

import (
	"context"
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

// DeriveDomain is deriveDomain, for the external tests of the domain.
var DeriveDomain = deriveDomain

// DiffOver is Diff over dom instead of the domain derived from a and b.
func DiffOver(ctx context.Context, a, b *RuleSet, dom *Domain, opts DiffOptions) (*DiffReport, error) {
	opts.domain = dom
	return Diff(ctx, a, b, opts)
}
