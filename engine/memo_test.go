package engine

import (
	"context"
	"testing"
)

// TestResolveUsesMemo: an equal input is answered from the memo, and the
// memo key tells inputs apart that only a careless encoding would confuse.
func TestResolveUsesMemo(t *testing.T) {
	rs := testRuleSet(t)
	in1 := Input{"platform": "gpu", "platform_version": "cuda 1", "local_hardware_id": 0}
	in2 := Input{"platform": "gpu", "platform_version": "cuda 1", "local_hardware_id": nil}
	d1, err1 := rs.Resolve(context.Background(), in1)
	d2, err2 := rs.Resolve(context.Background(), in2)
	if err1 != nil || err2 != nil || d1.Equal(d2) {
		t.Fatalf("id 0 and id null decided alike: %v %v (%v %v)", d1, d2, err1, err2)
	}
	if n := rs.memo.Len(); n != 2 {
		t.Fatalf("memo holds %d decisions, want 2", n)
	}
	if _, err := rs.Resolve(context.Background(), in1); err != nil || rs.memo.Len() != 2 {
		t.Fatalf("a repeated input added to the memo: %d entries (%v)", rs.memo.Len(), err)
	}
}
