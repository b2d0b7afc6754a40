package memo

import (
	"fmt"
	"testing"
)

// TestMemoIsBounded feeds unique keys, as an attacker would, and checks
// that the memo never holds more than its size.
func TestMemoIsBounded(t *testing.T) {
	m := New[int](16)
	for i := range 1000 {
		m.Put(fmt.Appendf(nil, "key %d", i), i)
		if m.Len() > 16 {
			t.Fatalf("memo holds %d values after %d puts, want at most 16", m.Len(), i+1)
		}
	}
	if v, ok := m.Get([]byte("key 999")); !ok || v != 999 {
		t.Errorf("Get of the last key put = %d, %v; want 999, true", v, ok)
	}
	m.Put(make([]byte, MaxKey+1), 1)
	if _, ok := m.Get(make([]byte, MaxKey+1)); ok {
		t.Errorf("memo kept a key longer than MaxKey")
	}
}

func TestNilMemo(t *testing.T) {
	m := New[int](0)
	m.Put([]byte("k"), 1)
	if _, ok := m.Get([]byte("k")); ok || m.Len() != 0 {
		t.Errorf("a memo of size 0 remembered")
	}
}
