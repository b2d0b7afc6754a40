package wasmhost

import (
	"sync"

	"github.com/dlroute/dlroute/machine"
)

// bufferTable is a table of buffers by handle, shared by the host functions of
// one runner: the guest names buffers by handle and never sees their bytes.
// It is safe for concurrent use.
type bufferTable struct {
	mu    sync.Mutex
	next  uint32
	m     map[uint32]machine.Buffer
	notes map[uint32]copyNote // by source handle: what copy_to_host did with it
}

// copyNote is what copy_to_host did with one source buffer: the copies it
// registered, and the copier's last error. The guest sees only a status;
// the Go caller that registered the source reads the note for the rest.
type copyNote struct {
	copies []uint32
	err    error
}

// add registers a buffer and returns its handle (never 0).
func (b *bufferTable) add(buf machine.Buffer) uint32 {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.m == nil {
		b.m = map[uint32]machine.Buffer{}
	}
	b.next++
	b.m[b.next] = buf
	return b.next
}

// get returns the buffer of a handle.
func (b *bufferTable) get(h uint32) (machine.Buffer, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	buf, ok := b.m[h]
	return buf, ok
}

// note records a copy made of src (dst), or the copier's error.
func (b *bufferTable) note(src, dst uint32, err error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.notes == nil {
		b.notes = map[uint32]copyNote{}
	}
	n := b.notes[src]
	if err != nil {
		n.err = err
	} else {
		n.copies = append(n.copies, dst)
	}
	b.notes[src] = n
}

// release forgets src and every copy made of it, and returns the copies
// by handle and the copier's last error.
func (b *bufferTable) release(src uint32) (map[uint32]machine.Buffer, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	n := b.notes[src]
	copies := make(map[uint32]machine.Buffer, len(n.copies))
	for _, c := range n.copies {
		if buf, ok := b.m[c]; ok {
			copies[c] = buf
			delete(b.m, c)
		}
	}
	delete(b.m, src)
	delete(b.notes, src)
	return copies, n.err
}
