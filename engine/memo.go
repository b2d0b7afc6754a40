package engine

import (
	"cmp"
	"sync"
)

// DefaultMemoSize is how many decisions a rule set remembers when
// Options.MemoSize is 0. A process sees a handful of distinct devices, so
// the memo is almost always hit; its bound is what keeps a stream of unique
// inputs (an attacker's, or a fuzzer's) from growing memory.
const DefaultMemoSize = 4096

// maxMemoKey is the longest input key memoised: longer inputs are
// evaluated each time, so the memo holds at most DefaultMemoSize*maxMemoKey
// bytes of keys.
const maxMemoKey = 512

// memo maps an input's canonical key to its decision. Rules are pure
// functions of their inputs, so a remembered decision is always right.
// When full it drops an arbitrary entry (Go's map order), which costs O(1)
// and needs no bookkeeping on the read path.
type memo struct {
	mu      sync.RWMutex
	size    int
	entries map[string]Decision
}

func newMemo(size int) *memo {
	if size < 0 {
		return nil
	}
	size = cmp.Or(size, DefaultMemoSize)
	return &memo{size: size, entries: make(map[string]Decision, min(size, 64))}
}

func (m *memo) get(key []byte) (Decision, bool) {
	if m == nil {
		return Decision{}, false
	}
	m.mu.RLock()
	d, ok := m.entries[string(key)] // no allocation: the compiler sees a lookup
	m.mu.RUnlock()
	return d, ok
}

func (m *memo) put(key []byte, d Decision) {
	if m == nil || len(key) > maxMemoKey {
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
	m.entries[string(key)] = d
}

// len reports how many decisions are remembered.
func (m *memo) len() int {
	if m == nil {
		return 0
	}
	m.mu.RLock()
	defer m.mu.RUnlock()
	return len(m.entries)
}
