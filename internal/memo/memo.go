// Package memo is a bounded, concurrency-safe map from a byte key to a
// remembered value: the memo of decisions that the engine keeps, and that
// the WebAssembly host keeps in front of the module.
package memo

import "sync"

// MaxKey is the longest key remembered: longer keys are never stored, so a
// memo of n entries holds at most n*MaxKey bytes of keys.
const MaxKey = 512

// Memo remembers up to its size values. When full it drops an arbitrary
// entry (Go's map order): O(1), with no bookkeeping on the read path, and a
// stream of unique keys cannot grow it. A nil *Memo remembers nothing.
type Memo[V any] struct {
	mu      sync.RWMutex
	size    int
	entries map[string]V
}

// New returns a memo of size entries, or nil (no memo) when size < 1.
func New[V any](size int) *Memo[V] {
	if size < 1 {
		return nil
	}
	return &Memo[V]{size: size, entries: make(map[string]V, min(size, 64))}
}

// Get returns the value remembered for key. It does not allocate.
func (m *Memo[V]) Get(key []byte) (V, bool) {
	if m == nil {
		var zero V
		return zero, false
	}
	m.mu.RLock()
	v, ok := m.entries[string(key)] // a lookup: the conversion does not allocate
	m.mu.RUnlock()
	return v, ok
}

// Put remembers v for key, unless key is longer than MaxKey.
func (m *Memo[V]) Put(key []byte, v V) {
	if m == nil || len(key) > MaxKey {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.entries) >= m.size {
		for k := range m.entries {
			delete(m.entries, k)
			break
		}
	}
	m.entries[string(key)] = v
}

// Len reports how many values are remembered.
func (m *Memo[V]) Len() int {
	if m == nil {
		return 0
	}
	m.mu.RLock()
	defer m.mu.RUnlock()
	return len(m.entries)
}
