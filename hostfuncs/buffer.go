package hostfuncs

import (
	"context"
	"errors"
	"fmt"
	"sync"
)

// DLPack device type codes the host's buffers use (dlpack.h).
const (
	DeviceCPU      = 1
	DeviceCUDA     = 2
	DeviceCUDAHost = 3
	DeviceROCM     = 10
)

// Buffer is an array's memory as the host sees it: on a device (Ptr, a
// device address) or in host memory (Data).
type Buffer struct {
	DeviceType int32   // DLPack code of where the bytes are
	DeviceID   int32   // device ordinal
	Ptr        uintptr // device address, when the bytes are not in host memory
	Data       []byte  // the bytes, when they are in host memory
	Size       int64   // bytes
}

// Copier copies a buffer into host memory. CopyToHost returns a new buffer
// on (kDLCPU, 0) that the caller owns alone (DLPack's IS_COPIED).
type Copier interface {
	CopyToHost(ctx context.Context, src Buffer) (Buffer, error)
}

// ErrNotHostReachable is returned by a copier for a buffer it cannot read.
var ErrNotHostReachable = errors.New("buffer is not in memory this copier can read")

// HostCopier copies buffers that are already in host memory (kDLCPU and
// pinned host memory): the copy a producer makes for copy=True.
type HostCopier struct{}

// CopyToHost copies src.Data.
func (HostCopier) CopyToHost(ctx context.Context, src Buffer) (Buffer, error) {
	if src.Data == nil {
		return Buffer{}, fmt.Errorf("%w: device type %d holds no host bytes", ErrNotHostReachable, src.DeviceType)
	}
	if int64(len(src.Data)) != src.Size {
		return Buffer{}, fmt.Errorf("buffer says %d bytes but holds %d", src.Size, len(src.Data))
	}
	return Buffer{DeviceType: DeviceCPU, DeviceID: 0, Data: append([]byte(nil), src.Data...), Size: src.Size}, nil
}

// Buffers is a table of buffers by handle, shared by the host functions of
// one runner: the guest names buffers by handle and never sees their bytes.
// It is safe for concurrent use.
type Buffers struct {
	mu    sync.Mutex
	next  uint32
	m     map[uint32]Buffer
	notes map[uint32]copyNote // by source handle: what copy_to_host did with it
}

// copyNote is what copy_to_host did with one source buffer: the copies it
// registered, and the copier's last error. The guest sees only a status;
// the Go caller that registered the source reads the note for the rest.
type copyNote struct {
	copies []uint32
	err    error
}

// Add registers a buffer and returns its handle (never 0).
func (b *Buffers) Add(buf Buffer) uint32 {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.m == nil {
		b.m = map[uint32]Buffer{}
	}
	b.next++
	b.m[b.next] = buf
	return b.next
}

// Get returns the buffer of a handle.
func (b *Buffers) Get(h uint32) (Buffer, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	buf, ok := b.m[h]
	return buf, ok
}

// Remove forgets a handle (and not the copies made of its buffer).
func (b *Buffers) Remove(h uint32) {
	b.mu.Lock()
	defer b.mu.Unlock()
	delete(b.m, h)
	delete(b.notes, h)
}

// note records a copy made of src (dst), or the copier's error.
func (b *Buffers) note(src, dst uint32, err error) {
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
func (b *Buffers) release(src uint32) (map[uint32]Buffer, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	n := b.notes[src]
	copies := make(map[uint32]Buffer, len(n.copies))
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
