package engine

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/dlroute/dlroute/plan"
	"github.com/dlroute/dlroute/rules"
)

// planBenchLines are jax@v3's domain as JSON lines: every boundary its
// rules draw, decisions and exceptions alike.
func planBenchLines(b *testing.B, rs *RuleSet) [][]byte {
	dom := deriveDomain(rs)
	var lines [][]byte
	for i := range dom.Size() {
		line, err := json.Marshal(domainInput(dom, i))
		if err != nil {
			b.Fatal(err)
		}
		lines = append(lines, line)
	}
	return lines
}

// BenchmarkPlanDecide compares, on the same JSON lines of jax@v3's
// domain, the plan's Decide with the engine's ResolveJSON with its memo
// off (a miss each time), and reports the plan's size:
//
//	go test ./engine -run '^$' -bench 'BenchmarkPlanDecide' -benchmem -count 5
func BenchmarkPlanDecide(b *testing.B) {
	cat, err := Load(rules.FS, Options{MemoSize: -1})
	if err != nil {
		b.Fatal(err)
	}
	rs, err := cat.RuleSet("jax@v3")
	if err != nil {
		b.Fatal(err)
	}
	data, err := rs.Plan()
	if err != nil {
		b.Fatal(err)
	}
	p, err := plan.Decode(data)
	if err != nil {
		b.Fatal(err)
	}
	lines := planBenchLines(b, rs)
	b.Run("engine-miss", func(b *testing.B) {
		ctx := context.Background()
		for i := 0; b.Loop(); i++ {
			rs.ResolveJSON(ctx, lines[i%len(lines)])
		}
	})
	b.Run("plan", func(b *testing.B) {
		for i := 0; b.Loop(); i++ {
			p.Decide(lines[i%len(lines)])
		}
		b.ReportMetric(float64(len(data)), "plan-bytes")
	})
	b.Run("decode", func(b *testing.B) {
		for b.Loop() {
			plan.Decode(data)
		}
	})
}
