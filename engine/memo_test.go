package engine

import (
	"context"
	"fmt"
	"testing"
)

// TestMemoIsBounded feeds unique platform versions, as an attacker would,
// and checks that the memo never holds more than its size.
func TestMemoIsBounded(t *testing.T) {
	m := newMemo(16)
	for i := range 1000 {
		m.put(fmt.Appendf(nil, "key %d", i), Decision{Rule: "r"})
		if m.len() > 16 {
			t.Fatalf("memo holds %d decisions after %d puts, want at most 16", m.len(), i+1)
		}
	}
	m.put(make([]byte, maxMemoKey+1), Decision{})
	if _, ok := m.get(make([]byte, maxMemoKey+1)); ok {
		t.Errorf("memo kept a key longer than maxMemoKey")
	}
}

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
	if n := rs.memo.len(); n != 2 {
		t.Fatalf("memo holds %d decisions, want 2", n)
	}
	if _, err := rs.Resolve(context.Background(), in1); err != nil || rs.memo.len() != 2 {
		t.Fatalf("a repeated input added to the memo: %d entries (%v)", rs.memo.len(), err)
	}
}
