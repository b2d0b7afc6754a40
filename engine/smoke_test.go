package engine_test

import (
	"context"
	"testing"

	"github.com/dlroute/dlroute/engine"
	"github.com/dlroute/dlroute/rules"
)

func TestSmoke(t *testing.T) {
	c, err := engine.Load(rules.FS, engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, rs := range c.RuleSets() {
		for _, r := range rs.Test(context.Background()) {
			if !r.Pass {
				t.Errorf("%s: %s: got %v (%v), want %v", r.Pos, r.Name, r.Got, r.Err, r.Want)
			}
		}
	}
}
