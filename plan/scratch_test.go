package plan_test

import (
	"strconv"
	"sync"
	"testing"

	"github.com/dlroute/dlroute/plan"
	"github.com/dlroute/dlroute/rules"
)

// shippedJax is jax@v3's plan from rules/plans.bin, as the decision
// module's hosts load it.
func shippedJax(t *testing.T) *plan.Plan {
	t.Helper()
	entries, err := plan.DecodeSet(rules.Plans)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.Ref == "jax@v3" {
			p, err := plan.Decode(e.Plan)
			if err != nil {
				t.Fatal(err)
			}
			return p
		}
	}
	t.Fatal("rules/plans.bin has no plan of jax@v3")
	return nil
}

// TestDecideManyGoroutines: decisions made at the same time on many
// goroutines, which share the spare scratch, answer what the same
// decisions made one at a time do (run with -race).
func TestDecideManyGoroutines(t *testing.T) {
	p := shippedJax(t)
	lines := []string{
		`{"platform":"gpu","platform_version":"cuda 12030","local_hardware_id":1}`,
		`{"platform":"gpu","platform_version":"rocm 6","memory_kind":"pinned_host","local_hardware_id":3}`,
		`{"platform":"tpu","platform_version":"x","memory_kind":"pinned_host","local_hardware_id":0}`,
		`{"platform":"cpu","platform_version":"x"}`,
		`{"platform":"gpu","platform_version":"x","shards":"2"}`,
		`{"platform":"gpu","platform_version":"x","a":1,"b":2,"c":3,"d":4,"e":5,"f":6,"g":7,"h":8,"i":9}`,
	}
	answer := func(line string) string {
		got, err := p.Decide([]byte(line))
		if err != nil {
			return "error " + err.Error()
		}
		return string(got)
	}
	want := make([]string, len(lines))
	for i, l := range lines {
		want[i] = answer(l)
	}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for k := range 300 {
				i := (g + k) % len(lines)
				if got := answer(lines[i]); got != want[i] {
					t.Errorf("Decide(%s) on goroutine %d\n got %s\nwant %s", lines[i], g, got, want[i])
					return
				}
			}
		})
	}
	wg.Wait()
}

// TestDecideAllocatesOnlyValues: a decision on a line never seen
// before allocates the values it makes (the platform_version string,
// the message built from it, the filtered markers), not its frame, its
// input's fields or the strings equal to a plan's constants ("gpu"):
// in WebAssembly an allocation is among a decision's costliest steps.
func TestDecideAllocatesOnlyValues(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	p := shippedJax(t)
	out := make([]byte, 0, 512)
	i := 0
	allocs := testing.AllocsPerRun(200, func() {
		i++
		line := []byte(`{"platform":"gpu","platform_version":"fork ` + strconv.Itoa(i) + `","local_hardware_id":0}`)
		if _, err := p.AppendDecide(out[:0], line); err != nil {
			t.Fatal(err)
		}
	})
	// The line itself and its number's text are the test's own two.
	if got := allocs - 2; got > 5 {
		t.Errorf("a decision of a new line allocates %v objects; want at most 5", got)
	}
}
