// Package memo is a bounded, concurrency-safe map from a byte key to a
// remembered value: the memo of decisions that the engine keeps, and that
// the WebAssembly host keeps in front of the module.
package memo

import (
	"hash/maphash"
	"sync"
)

// MaxKey is the longest key remembered: longer keys are never stored, so a
// memo of n entries holds at most n*MaxKey bytes of keys.
const MaxKey = 512

// shards is how many independently locked parts a memo has. Readers of
// one lock still write its reader count, so goroutines that share one lock
// slow each other down; spread over shards, two goroutines resolving
// different inputs rarely meet.
const shards = 16

// Memo remembers up to its size values. When a shard is full it drops an
// arbitrary entry of it (Go's map order): O(1), with no bookkeeping on the
// read path, and a stream of unique keys cannot grow it. A nil *Memo
// remembers nothing.
type Memo[V any] struct {
	seed   maphash.Seed
	shards [shards]shard[V]
}

// shard maps a key's hash to the entry, which keeps the key: two keys of
// one hash share a slot (the later replaces the earlier), and a lookup
// compares the key, so a collision costs a miss, never a wrong value.
type shard[V any] struct {
	mu      sync.RWMutex
	size    int
	entries map[uint64]entry[V]
	_       [40]byte // keeps shards on separate cache lines
}

type entry[V any] struct {
	key string
	v   V
}

// New returns a memo of about size entries (rounded up to a multiple of 16),
// or nil (no memo) when size < 1.
func New[V any](size int) *Memo[V] {
	if size < 1 {
		return nil
	}
	m := &Memo[V]{seed: maphash.MakeSeed()}
	for i := range m.shards {
		m.shards[i].size = (size + shards - 1) / shards
		m.shards[i].entries = map[uint64]entry[V]{}
	}
	return m
}

func (m *Memo[V]) shard(key []byte) (*shard[V], uint64) {
	h := maphash.Bytes(m.seed, key)
	return &m.shards[h%shards], h
}

// Get returns the value remembered for key. It does not allocate.
func (m *Memo[V]) Get(key []byte) (V, bool) {
	if m == nil {
		var zero V
		return zero, false
	}
	s, h := m.shard(key)
	s.mu.RLock()
	e, ok := s.entries[h]
	s.mu.RUnlock()
	if !ok || e.key != string(key) { // a comparison: the conversion does not allocate
		var zero V
		return zero, false
	}
	return e.v, true
}

// Put remembers v for key, unless key is longer than MaxKey.
func (m *Memo[V]) Put(key []byte, v V) {
	if m == nil || len(key) > MaxKey {
		return
	}
	s, h := m.shard(key)
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, replacing := s.entries[h]; !replacing && len(s.entries) >= s.size {
		for k := range s.entries {
			delete(s.entries, k)
			break
		}
	}
	s.entries[h] = entry[V]{string(key), v}
}

// Len reports how many values are remembered.
func (m *Memo[V]) Len() int {
	if m == nil {
		return 0
	}
	n := 0
	for i := range m.shards {
		s := &m.shards[i]
		s.mu.RLock()
		n += len(s.entries)
		s.mu.RUnlock()
	}
	return n
}
