package machine

import (
	"context"
	"errors"
	"fmt"
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
