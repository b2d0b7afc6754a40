package machine

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
)

// fakeGPU is a CUDA driver's memory side without a GPU: allocations are
// byte slices at made-up device addresses, and there is one "current
// context" (a real driver has one per thread).
type fakeGPU struct {
	mu       sync.Mutex
	devices  int32
	mem      map[uint64][]byte // allocations by base address
	current  uintptr
	retained map[int32]int // retain count by CUdevice
	copiedIn []uintptr     // the current context at each copy
}

func newFakeGPU(devices int32) *fakeGPU {
	return &fakeGPU{devices: devices, mem: map[uint64][]byte{}, retained: map[int32]int{}}
}

// fakeDevice is a CUdevice distinct from its ordinal, to catch a mix-up.
func fakeDevice(ordinal int32) int32 { return 100 + ordinal }

func fakeContext(dev int32) uintptr { return uintptr(0xc0000 + dev) }

func (g *fakeGPU) DeviceGet(dev *int32, ordinal int32) int32 {
	if ordinal < 0 || ordinal >= g.devices {
		return 101 // CUDA_ERROR_INVALID_DEVICE
	}
	*dev = fakeDevice(ordinal)
	return 0
}

func (g *fakeGPU) DevicePrimaryCtxRetain(ctx *uintptr, dev int32) int32 {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.retained[dev]++
	*ctx = fakeContext(dev)
	return 0
}

func (g *fakeGPU) DevicePrimaryCtxRelease(dev int32) int32 {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.retained[dev] == 0 {
		return 201 // CUDA_ERROR_INVALID_CONTEXT
	}
	g.retained[dev]--
	return 0
}

func (g *fakeGPU) CtxGetCurrent(ctx *uintptr) int32 {
	g.mu.Lock()
	defer g.mu.Unlock()
	*ctx = g.current
	return 0
}

func (g *fakeGPU) CtxSetCurrent(ctx uintptr) int32 {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.current = ctx
	return 0
}

func (g *fakeGPU) MemcpyDtoH(dst []byte, src uint64) int32 {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.copiedIn = append(g.copiedIn, g.current)
	for base, b := range g.mem {
		if src >= base && src-base+uint64(len(dst)) <= uint64(len(b)) {
			copy(dst, b[src-base:])
			return 0
		}
	}
	return 1 // CUDA_ERROR_INVALID_VALUE
}

// pattern is n bytes that differ at every offset a test uses.
func pattern(n int, seed byte) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i*7) + seed
	}
	return b
}

func TestCUDACopierCopies(t *testing.T) {
	gpu := newFakeGPU(2)
	data := pattern(4099, 3)
	gpu.mem[0x7f0000000000] = data
	gpu.mem[0x7f0000100000] = pattern(16, 9)
	c := newCUDACopier(gpu)
	defer c.Close()
	tests := []struct {
		name    string
		src     Buffer
		want    []byte
		wantErr string
	}{
		{"a whole allocation", Buffer{DeviceType: DeviceCUDA, Ptr: 0x7f0000000000, Size: 4099}, data, ""},
		{"inside an allocation", Buffer{DeviceType: DeviceCUDA, Ptr: 0x7f0000000005, Size: 100}, data[5:105], ""},
		{"on device 1", Buffer{DeviceType: DeviceCUDA, DeviceID: 1, Ptr: 0x7f0000100000, Size: 16}, pattern(16, 9), ""},
		{"nothing", Buffer{DeviceType: DeviceCUDA, Ptr: 0x7f0000000000}, []byte{}, ""},
		{"host bytes of another device type", Buffer{DeviceType: DeviceCUDAHost, Data: []byte("pinned"), Size: 6}, []byte("pinned"), ""},
		{"past the allocation", Buffer{DeviceType: DeviceCUDA, Ptr: 0x7f0000000000, Size: 4100}, nil,
			"copying 4100 bytes from CUDA device 0 at 0x7f0000000000: libcuda.so.1: cuMemcpyDtoH_v2 returned 1 (CUDA_ERROR_INVALID_VALUE)"},
		{"a device that does not exist", Buffer{DeviceType: DeviceCUDA, DeviceID: 2, Ptr: 0x7f0000000000, Size: 1}, nil,
			"CUDA device 2: libcuda.so.1: cuDeviceGet returned 101 (CUDA_ERROR_INVALID_DEVICE)"},
		{"no device address", Buffer{DeviceType: DeviceCUDA, Size: 8}, nil,
			"buffer is not in memory this copier can read: CUDA buffer without a device address"},
		{"a ROCm buffer", Buffer{DeviceType: DeviceROCM, Ptr: 0x7f0000000000, Size: 8}, nil,
			"buffer is not in memory this copier can read: the CUDA copier reads device type 10 only from host bytes"},
		{"a negative size", Buffer{DeviceType: DeviceCUDA, Ptr: 0x7f0000000000, Size: -1}, nil, "CUDA buffer of -1 bytes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := c.CopyToHost(context.Background(), tt.src)
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Errorf("CopyToHost(%+v) got error %v, want %q", tt.src, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("CopyToHost(%+v) got error %v", tt.src, err)
			}
			want := Buffer{DeviceType: DeviceCPU, Data: tt.want, Size: int64(len(tt.want))}
			if got.DeviceType != want.DeviceType || got.DeviceID != 0 || got.Size != want.Size || !bytes.Equal(got.Data, want.Data) || got.Data == nil {
				t.Errorf("CopyToHost(%+v) got %+v, want %+v", tt.src, got, want)
			}
		})
	}
}

func TestCUDACopierErrorsAreTyped(t *testing.T) {
	c := newCUDACopier(newFakeGPU(1))
	_, err := c.CopyToHost(context.Background(), Buffer{DeviceType: DeviceCUDA, Ptr: 8, Size: 4})
	var ce *CallError
	if !errors.As(err, &ce) || ce.Call != "cuMemcpyDtoH_v2" || ce.Status != 1 {
		t.Errorf("a bad address got %v, want a *CallError of cuMemcpyDtoH_v2 with status 1", err)
	}
	_, err = c.CopyToHost(context.Background(), Buffer{DeviceType: DeviceCPU, Size: 4})
	if !errors.Is(err, ErrNotHostReachable) {
		t.Errorf("a CPU buffer without bytes got %v, want ErrNotHostReachable", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := c.CopyToHost(ctx, Buffer{DeviceType: DeviceCUDA, Ptr: 8, Size: 4}); !errors.Is(err, context.Canceled) {
		t.Errorf("an ended context got %v, want context.Canceled", err)
	}
}

// The copy runs in the device's primary context and leaves the thread's
// current context as it found it.
func TestCUDACopierRestoresContext(t *testing.T) {
	gpu := newFakeGPU(2)
	gpu.mem[0x1000] = pattern(64, 1)
	gpu.current = 0xabc // some other library's context
	c := newCUDACopier(gpu)
	if _, err := c.CopyToHost(context.Background(), Buffer{DeviceType: DeviceCUDA, DeviceID: 1, Ptr: 0x1000, Size: 64}); err != nil {
		t.Fatal(err)
	}
	if len(gpu.copiedIn) != 1 || gpu.copiedIn[0] != fakeContext(fakeDevice(1)) {
		t.Errorf("copied in contexts %#x, want [%#x]", gpu.copiedIn, fakeContext(fakeDevice(1)))
	}
	if gpu.current != 0xabc {
		t.Errorf("current context after the copy got %#x, want 0xabc", gpu.current)
	}
}

// Many goroutines copy at once; each device's context is retained once
// and released by Close, after which copies are refused.
func TestCUDACopierConcurrentAndClose(t *testing.T) {
	gpu := newFakeGPU(2)
	gpu.mem[0x1000] = pattern(256, 1)
	gpu.mem[0x9000] = pattern(256, 2)
	c := newCUDACopier(gpu)
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for g := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			dev := int32(g % 2)
			src := Buffer{DeviceType: DeviceCUDA, DeviceID: dev, Ptr: uintptr(0x1000 + 0x8000*int(dev)), Size: 256}
			for range 50 {
				got, err := c.CopyToHost(context.Background(), src)
				if err != nil || !bytes.Equal(got.Data, pattern(256, byte(dev+1))) {
					errs <- fmt.Errorf("device %d: got %v, %v", dev, got.Data[:min(4, len(got.Data))], err)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if got := gpu.retained; got[fakeDevice(0)] != 1 || got[fakeDevice(1)] != 1 {
		t.Errorf("retained got %v, want each device once", got)
	}
	if err := c.Close(); err != nil {
		t.Errorf("Close got %v", err)
	}
	if err := c.Close(); err != nil {
		t.Errorf("a second Close got %v", err)
	}
	if got := gpu.retained; got[fakeDevice(0)] != 0 || got[fakeDevice(1)] != 0 {
		t.Errorf("retained after Close got %v, want none", got)
	}
	if _, err := c.CopyToHost(context.Background(), Buffer{DeviceType: DeviceCUDA, Ptr: 0x1000, Size: 1}); !errors.Is(err, ErrCopierClosed) {
		t.Errorf("CopyToHost after Close got %v, want ErrCopierClosed", err)
	}
}

func TestNewCUDACopierWithoutDriver(t *testing.T) {
	tests := []struct {
		env  Env
		want string
	}{
		{Env{}, "libcuda.so.1: this Env loads no libraries (Env.Open is nil)"},
		{Env{Open: func(lib string) (Library, error) { return nil, noLibrary(lib) }}, "libcuda.so.1: cannot open shared object file: No such file or directory"},
	}
	for _, tt := range tests {
		_, err := NewCUDACopier(tt.env)
		var pe *ProbeError
		if !errors.As(err, &pe) || pe.Code != CodeLoadFailed || err.Error() != tt.want {
			t.Errorf("NewCUDACopier got %v, want a load_failed error %q", err, tt.want)
		}
	}
}
