package plan_test

import (
	"strconv"
	"testing"

	"github.com/dlroute/dlroute/plan"
	"github.com/dlroute/dlroute/rules"
)

// BenchmarkDecide decides jax@v3's plan, from rules.Plans, natively: a
// new unknown GPU platform each line, as the decision module's Node and
// wazero benchmarks hand it, and the same line explained:
//
//	go test ./plan -run '^$' -bench 'BenchmarkDecide' -benchmem -count 5
func BenchmarkDecide(b *testing.B) {
	entries, err := plan.DecodeSet(rules.Plans)
	if err != nil {
		b.Fatal(err)
	}
	var p *plan.Plan
	for _, e := range entries {
		if e.Ref == "jax@v3" {
			if p, err = plan.Decode(e.Plan); err != nil {
				b.Fatal(err)
			}
		}
	}
	line := func(i int) []byte {
		return []byte(`{"platform":"gpu","platform_version":"fork ` + strconv.Itoa(i) + `","local_hardware_id":0}`)
	}
	lines := make([][]byte, 1024)
	for i := range lines {
		lines[i] = line(i)
	}
	for _, run := range []struct {
		name   string
		answer func(p *plan.Plan, dst, line []byte) ([]byte, error)
	}{{"decide", (*plan.Plan).AppendDecide}, {"explain", (*plan.Plan).AppendExplain}} {
		b.Run(run.name, func(b *testing.B) {
			b.ReportAllocs()
			var out []byte
			for i := 0; b.Loop(); i++ {
				if out, err = run.answer(p, out[:0], lines[i%len(lines)]); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
