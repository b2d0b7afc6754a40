// Package memo is a bounded, concurrency-safe map from a byte key to a
// remembered value: the memo of decisions that the engine keeps, and that
// the WebAssembly host keeps in front of the module.
package memo

import (
	"hash/maphash"
	"sync"
	"sync/atomic"
)

// MaxKey is the longest key remembered: longer keys are never stored, so a
// memo of n entries holds at most n*MaxKey bytes of keys.
const MaxKey = 512

// shards is how many independent parts a memo has.
const shards = 64

// Memo remembers up to about its size values, and is built for a workload
// of few keys read very often (a process sees a handful of devices) that
// must also survive many keys read once (an attacker's unique strings).
//
// Each shard has a read map, immutable behind an atomic pointer, and a
// dirty map of newer entries under a lock, as sync.Map does: a read of a
// settled key takes no lock and writes no shared memory, so goroutines
// resolving the same input do not slow each other down. A key read from
// the dirty map soon moves to the read map. Moving copies the shard, at
// most size/64 entries, once per size/256 new keys, so a Put costs a few
// entry copies however many keys stream by; a full shard sheds a quarter
// of its entries, arbitrary ones (Go's map order). A nil *Memo remembers
// nothing.
type Memo[V any] struct {
	seed   maphash.Seed
	size   int // per shard
	shards [shards]shard[V]
}

// shard maps a key's hash to the entry, which keeps the key: two keys of
// one hash share a slot (the later replaces the earlier), and a lookup
// compares the key, so a collision costs a miss, never a wrong value.
type shard[V any] struct {
	read   atomic.Pointer[map[uint64]entry[V]]
	mu     sync.Mutex
	dirty  map[uint64]entry[V] // entries not yet in read
	misses int                 // reads that found their key in dirty
	_      [32]byte            // keeps shards on separate cache lines
}

type entry[V any] struct {
	key string
	v   V
}

// New returns a memo of about size entries (at least 4 a shard), or nil
// (no memo) when size < 1.
func New[V any](size int) *Memo[V] {
	if size < 1 {
		return nil
	}
	m := &Memo[V]{seed: maphash.MakeSeed(), size: max((size+shards-1)/shards, 4)}
	for i := range m.shards {
		m.shards[i].read.Store(&map[uint64]entry[V]{})
		m.shards[i].dirty = map[uint64]entry[V]{}
	}
	return m
}

func (m *Memo[V]) shard(key []byte) (*shard[V], uint64) {
	h := maphash.Bytes(m.seed, key)
	return &m.shards[h%shards], h
}

// Get returns the value remembered for key. It does not allocate.
func (m *Memo[V]) Get(key []byte) (V, bool) {
	var zero V
	if m == nil {
		return zero, false
	}
	s, h := m.shard(key)
	e, ok := (*s.read.Load())[h]
	if !ok || e.key != string(key) { // a comparison: the conversion does not allocate
		s.mu.Lock()
		if e, ok = s.dirty[h]; ok {
			if s.misses++; s.misses >= len(s.dirty) {
				s.settle(m.size)
			}
		}
		s.mu.Unlock()
		if !ok || e.key != string(key) {
			return zero, false
		}
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
	if e, ok := (*s.read.Load())[h]; ok && e.key == string(key) {
		return // rules are pure: the value is the one remembered
	}
	s.dirty[h] = entry[V]{string(key), v}
	if len(*s.read.Load())+len(s.dirty) > m.size || len(s.dirty) > m.size/4 {
		s.settle(m.size)
	}
}

// settle moves the dirty entries into a new read map. When that would hold
// more than size entries, it first sheds older (read) entries, arbitrary
// ones, down to three quarters of size: the entries just added stay. The
// caller holds mu.
func (s *shard[V]) settle(size int) {
	read := *s.read.Load()
	next := make(map[uint64]entry[V], len(read)+len(s.dirty))
	keep := len(read)
	if len(read)+len(s.dirty) > size {
		keep = max(size*3/4-len(s.dirty), 0)
	}
	for h, e := range read {
		if len(next) >= keep {
			break
		}
		next[h] = e
	}
	for h, e := range s.dirty {
		next[h] = e
	}
	s.read.Store(&next)
	s.dirty = map[uint64]entry[V]{}
	s.misses = 0
}

// Len reports how many values are remembered.
func (m *Memo[V]) Len() int {
	if m == nil {
		return 0
	}
	n := 0
	for i := range m.shards {
		s := &m.shards[i]
		s.mu.Lock()
		read := *s.read.Load()
		n += len(read)
		for h := range s.dirty {
			if _, both := read[h]; !both {
				n++
			}
		}
		s.mu.Unlock()
	}
	return n
}
