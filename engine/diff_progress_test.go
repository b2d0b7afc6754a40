package engine_test

import (
	"testing"

	"github.com/dlroute/dlroute/engine"
)

// DiffOptions.Progress hears of each hundredth of the inputs decided, in
// order, one call at a time, the last with every input decided.
func TestDiffProgress(t *testing.T) {
	var calls [][2]int
	inCall := false
	opts := engine.DiffOptions{Progress: func(done, total int) {
		if inCall {
			t.Error("Progress called while another call runs")
		}
		inCall = true
		calls = append(calls, [2]int{done, total})
		inCall = false
	}}
	rep, err := engine.Diff(t.Context(), loadRuleSet(t, "jax@v1"), loadRuleSet(t, "jax@v2"), opts)
	if err != nil {
		t.Fatal(err)
	}
	if len(calls) == 0 || len(calls) > 100 {
		t.Fatalf("Diff of %d inputs: Progress called %d times, want 1 to 100: %v", rep.Tried, len(calls), calls)
	}
	for i, c := range calls {
		if c[1] != rep.Tried || (i > 0 && c[0] <= calls[i-1][0]) {
			t.Errorf("Progress calls %v: want done increasing, total %d", calls, rep.Tried)
			break
		}
	}
	if last := calls[len(calls)-1]; last[0] != rep.Tried {
		t.Errorf("Progress's last call is %v, want done == total == %d", last, rep.Tried)
	}
}
