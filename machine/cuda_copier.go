package machine

import (
	"context"
	"errors"
	"fmt"
	"math"
	"runtime"
	"sync"
)

// ErrCopierClosed is returned by CUDACopier.CopyToHost after Close.
var ErrCopierClosed = errors.New("machine: the CUDA copier is closed")

// CUDACopier copies buffers in NVIDIA GPU memory into host memory through
// the CUDA driver API: libcuda.so.1, loaded with purego, so neither cgo
// nor the CUDA toolkit is needed, only the driver. It copies in each
// device's primary context, the one the CUDA runtime (and so JAX) uses,
// in which the runtime's device addresses are valid. It is safe for
// concurrent use.
type CUDACopier struct {
	api cudaCopyAPI

	mu     sync.RWMutex // read-held by each copy, write-held by Close
	closed bool

	ctxMu sync.Mutex
	ctxs  map[int32]cudaPrimaryContext // by device ordinal
}

// cudaPrimaryContext is a device's primary context, retained by the copier.
type cudaPrimaryContext struct {
	dev int32   // CUdevice
	ctx uintptr // CUcontext
}

// cudaCopyAPI is the part of the CUDA driver API CUDACopier calls, one
// method per C function returning its CUresult; MemcpyDtoH copies
// len(dst) bytes, and dst is never empty. cudaDriver implements it with
// purego; tests give a fake device.
type cudaCopyAPI interface {
	DeviceGet(dev *int32, ordinal int32) int32            // cuDeviceGet
	DevicePrimaryCtxRetain(ctx *uintptr, dev int32) int32 // cuDevicePrimaryCtxRetain
	DevicePrimaryCtxRelease(dev int32) int32              // cuDevicePrimaryCtxRelease_v2
	CtxGetCurrent(ctx *uintptr) int32                     // cuCtxGetCurrent
	CtxSetCurrent(ctx uintptr) int32                      // cuCtxSetCurrent
	MemcpyDtoH(dst []byte, src uint64) int32              // cuMemcpyDtoH_v2
}

// NewCUDACopier loads libcuda.so.1 through env.Open and initialises the
// driver (cuInit). Its error is a *ProbeError: CodeLoadFailed where there
// is no driver ("libcuda.so.1: cannot open shared object file: No such
// file or directory"), CodeMissingSymbol for a driver older than CUDA 11,
// CodeNoDevices or CodeCallFailed when cuInit fails. The library stays
// loaded for the life of the process, even after Close: the driver's
// threads run its code.
func NewCUDACopier(env Env) (*CUDACopier, error) {
	d, err := bindCUDA(env, true)
	if err != nil {
		return nil, err
	}
	if st := d.Init(0); st != cudaSuccess {
		pe := cudaCallFailed("cuInit", st)
		if st == cudaErrorNoDevice {
			pe.Code = CodeNoDevices
		}
		return nil, pe
	}
	return newCUDACopier(d), nil
}

func newCUDACopier(api cudaCopyAPI) *CUDACopier {
	return &CUDACopier{api: api, ctxs: map[int32]cudaPrimaryContext{}}
}

// CopyToHost copies src.Size bytes from device address src.Ptr on CUDA
// device src.DeviceID (a kDLCUDA buffer) into a new buffer on (kDLCPU, 0)
// that the caller owns alone. A buffer of another device type is copied
// as HostCopier does when it holds host bytes, and is ErrNotHostReachable
// otherwise. A CUDA call that fails is a *CallError (a bad address is
// CUDA_ERROR_INVALID_VALUE). The copy is synchronous and cannot be
// interrupted: ctx is checked before it starts. The calling goroutine's
// thread has its current CUDA context restored afterwards.
func (c *CUDACopier) CopyToHost(ctx context.Context, src Buffer) (Buffer, error) {
	if err := ctx.Err(); err != nil {
		return Buffer{}, err
	}
	if src.DeviceType != DeviceCUDA {
		if src.Data != nil {
			return HostCopier{}.CopyToHost(ctx, src)
		}
		return Buffer{}, fmt.Errorf("%w: the CUDA copier reads device type %d only from host bytes", ErrNotHostReachable, src.DeviceType)
	}
	switch {
	case src.Ptr == 0:
		return Buffer{}, fmt.Errorf("%w: CUDA buffer without a device address", ErrNotHostReachable)
	case src.Size < 0 || src.Size > math.MaxInt:
		return Buffer{}, fmt.Errorf("CUDA buffer of %d bytes", src.Size)
	case src.DeviceID < 0:
		return Buffer{}, fmt.Errorf("CUDA buffer on device %d", src.DeviceID)
	}
	c.mu.RLock()
	defer c.mu.RUnlock()
	if c.closed {
		return Buffer{}, ErrCopierClosed
	}
	if src.Size == 0 {
		return Buffer{DeviceType: DeviceCPU, Data: []byte{}}, nil
	}
	pc, err := c.primaryContext(src.DeviceID)
	if err != nil {
		return Buffer{}, err
	}
	dst := make([]byte, src.Size)
	if err := c.copyIn(pc.ctx, dst, uint64(src.Ptr)); err != nil {
		return Buffer{}, fmt.Errorf("copying %d bytes from CUDA device %d at %#x: %w", src.Size, src.DeviceID, src.Ptr, err)
	}
	return Buffer{DeviceType: DeviceCPU, DeviceID: 0, Data: dst, Size: src.Size}, nil
}

// copyIn runs the copy in context ctx on one OS thread, since a CUDA
// context is current per thread, and puts the thread's context back.
func (c *CUDACopier) copyIn(ctx uintptr, dst []byte, src uint64) (err error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var prev uintptr
	if st := c.api.CtxGetCurrent(&prev); st != cudaSuccess {
		return cudaCallError("cuCtxGetCurrent", st)
	}
	if prev != ctx {
		if st := c.api.CtxSetCurrent(ctx); st != cudaSuccess {
			return cudaCallError("cuCtxSetCurrent", st)
		}
		defer func() {
			if st := c.api.CtxSetCurrent(prev); st != cudaSuccess && err == nil {
				err = cudaCallError("cuCtxSetCurrent", st)
			}
		}()
	}
	if st := c.api.MemcpyDtoH(dst, src); st != cudaSuccess {
		return cudaCallError("cuMemcpyDtoH_v2", st)
	}
	return nil
}

// primaryContext retains device ordinal's primary context the first time
// it is asked for, and keeps it until Close.
func (c *CUDACopier) primaryContext(ordinal int32) (cudaPrimaryContext, error) {
	c.ctxMu.Lock()
	defer c.ctxMu.Unlock()
	if pc, ok := c.ctxs[ordinal]; ok {
		return pc, nil
	}
	var pc cudaPrimaryContext
	if st := c.api.DeviceGet(&pc.dev, ordinal); st != cudaSuccess {
		return pc, fmt.Errorf("CUDA device %d: %w", ordinal, cudaCallError("cuDeviceGet", st))
	}
	if st := c.api.DevicePrimaryCtxRetain(&pc.ctx, pc.dev); st != cudaSuccess {
		return pc, fmt.Errorf("CUDA device %d: %w", ordinal, cudaCallError("cuDevicePrimaryCtxRetain", st))
	}
	c.ctxs[ordinal] = pc
	return pc, nil
}

// Close releases the primary contexts the copier retained, after the
// copies in flight end; later copies return ErrCopierClosed. It returns
// the first release that failed, and is safe to call more than once.
func (c *CUDACopier) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil
	}
	c.closed = true
	c.ctxMu.Lock()
	defer c.ctxMu.Unlock()
	var first error
	for ordinal, pc := range c.ctxs {
		if st := c.api.DevicePrimaryCtxRelease(pc.dev); st != cudaSuccess && first == nil {
			first = fmt.Errorf("CUDA device %d: %w", ordinal, cudaCallError("cuDevicePrimaryCtxRelease_v2", st))
		}
	}
	clear(c.ctxs)
	return first
}

// cudaCallError is a failed CUDA driver call during a copy.
func cudaCallError(call string, status int32) *CallError {
	return &CallError{Library: libCUDA, Call: call, Status: int64(status), Name: cudaStatusNames[int64(status)]}
}

var (
	_ Copier        = (*CUDACopier)(nil)
	_ cudaCopyAPI   = (*cudaDriver)(nil)
	_ cudaDriverAPI = (*cudaDriver)(nil)
)
