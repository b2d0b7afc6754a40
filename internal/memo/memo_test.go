package memo

import (
	"fmt"
	"testing"
)

// TestMemoIsBounded feeds unique keys, as an attacker would, and checks
// that the memo never holds more than its size.
func TestMemoIsBounded(t *testing.T) {
	m := New[int](256)
	for i := range 5000 {
		m.Put(fmt.Appendf(nil, "key %d", i), i)
		if m.Len() > 256 {
			t.Fatalf("memo holds %d values after %d puts, want at most 256", m.Len(), i+1)
		}
	}
	if m.Len() < 128 {
		t.Errorf("memo of 256 holds only %d values after 5000 puts", m.Len())
	}
	if v, ok := m.Get([]byte("key 4999")); !ok || v != 4999 {
		t.Errorf("Get of the last key put = %d, %v; want 4999, true", v, ok)
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

// TestCollisionIsAMiss: an entry in a key's slot that holds another key
// (two keys of one 64-bit hash) is not returned for it.
func TestCollisionIsAMiss(t *testing.T) {
	m := New[int](16)
	key := []byte("platform gpu, cuda 12030")
	s, h := m.shard(key)
	s.read.Store(&map[uint64]entry[int]{h: {key: "another input with the same hash", v: 7}})
	if v, ok := m.Get(key); ok {
		t.Fatalf("Get returned %d from a slot holding another key", v)
	}
	m.Put(key, 1)
	if v, ok := m.Get(key); !ok || v != 1 || m.Len() != 1 {
		t.Fatalf("after Put: Get = %d, %v (len %d); want 1, true, 1", v, ok, m.Len())
	}
}

// TestHotKeysSettle: a key read again moves to the lock-free read map.
func TestHotKeysSettle(t *testing.T) {
	m := New[int](4096)
	key := []byte("cuda 12030")
	m.Put(key, 1)
	s, h := m.shard(key)
	if _, ok := (*s.read.Load())[h]; ok {
		t.Fatalf("a new key is in the read map before anyone read it")
	}
	if v, ok := m.Get(key); !ok || v != 1 {
		t.Fatalf("Get = %d, %v", v, ok)
	}
	if _, ok := (*s.read.Load())[h]; !ok {
		t.Errorf("a key read from the dirty map did not move to the read map")
	}
}
