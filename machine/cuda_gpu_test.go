package machine

import (
	"bytes"
	"context"
	"errors"
	"os"
	"runtime"
	"sync"
	"testing"
)

// TestCUDACopierOnGPU copies from a real GPU: it allocates device memory
// with cuMemAlloc_v2, writes known bytes with cuMemcpyHtoD_v2, and
// compares what CopyToHost brings back. Where there is no CUDA driver or
// no GPU it skips, saying why. On a machine with an NVIDIA GPU and its
// driver (no toolkit, no cgo needed), run
//
//	DLROUTE_REQUIRE_GPU=1 go test -race -count=1 -run 'CUDA|ProbeSystemEnv' -v ./machine
//
// where DLROUTE_REQUIRE_GPU turns the skip into a failure.
func TestCUDACopierOnGPU(t *testing.T) {
	c, err := NewCUDACopier(SystemEnv())
	if err != nil {
		if os.Getenv("DLROUTE_REQUIRE_GPU") != "" {
			t.Fatalf("DLROUTE_REQUIRE_GPU is set but the CUDA driver cannot be used: %v", err)
		}
		t.Skipf("no CUDA driver: %v", err)
	}
	defer func() {
		if err := c.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	}()
	d := c.api.(*cudaDriver)
	var count int32
	if st := d.DeviceGetCount(&count); st != cudaSuccess || count == 0 {
		t.Fatalf("cuDeviceGetCount got %d devices, status %d", count, st)
	}
	t.Logf("%d CUDA device(s)", count)

	sizes := []int{1, 4093, 1<<20 + 17}
	ptrs := make([]uint64, len(sizes))
	want := make([][]byte, len(sizes))
	for i, n := range sizes {
		want[i] = pattern(n, byte(i+1))
		ptrs[i] = gpuAlloc(t, c, d, want[i])
	}
	defer func() {
		for _, p := range ptrs {
			gpuFree(t, c, d, p)
		}
	}()

	for i, n := range sizes {
		src := Buffer{DeviceType: DeviceCUDA, Ptr: uintptr(ptrs[i]), Size: int64(n)}
		got, err := c.CopyToHost(context.Background(), src)
		if err != nil || !bytes.Equal(got.Data, want[i]) || got.DeviceType != DeviceCPU || got.Size != int64(n) {
			t.Errorf("CopyToHost(%d bytes) got %d bytes, %v; want the bytes written", n, len(got.Data), err)
		}
	}
	// An unaligned address inside an allocation.
	got, err := c.CopyToHost(context.Background(), Buffer{DeviceType: DeviceCUDA, Ptr: uintptr(ptrs[1]) + 5, Size: 100})
	if err != nil || !bytes.Equal(got.Data, want[1][5:105]) {
		t.Errorf("CopyToHost at an offset got %v, want bytes 5 to 105", err)
	}

	// From many goroutines, so from threads other than the allocating one.
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			i := g % len(sizes)
			got, err := c.CopyToHost(context.Background(), Buffer{DeviceType: DeviceCUDA, Ptr: uintptr(ptrs[i]), Size: int64(sizes[i])})
			if err != nil || !bytes.Equal(got.Data, want[i]) {
				t.Errorf("goroutine %d: CopyToHost got %v", g, err)
			}
		}()
	}
	wg.Wait()

	// An address nothing was allocated at: the driver refuses it.
	_, err = c.CopyToHost(context.Background(), Buffer{DeviceType: DeviceCUDA, Ptr: 8, Size: 4})
	var ce *CallError
	if !errors.As(err, &ce) || ce.Call != "cuMemcpyDtoH_v2" {
		t.Errorf("CopyToHost of address 8 got %v, want a *CallError of cuMemcpyDtoH_v2", err)
	} else {
		t.Logf("address 8: %v", err)
	}
}

// gpuAlloc allocates device memory on device 0 holding data.
func gpuAlloc(t *testing.T, c *CUDACopier, d *cudaDriver, data []byte) uint64 {
	t.Helper()
	var ptr uint64
	inDevice0(t, c, d, func() {
		if st := d.MemAlloc(&ptr, uintptr(len(data))); st != cudaSuccess {
			t.Fatalf("cuMemAlloc_v2(%d) returned %d", len(data), st)
		}
		if st := d.MemcpyHtoD(ptr, data); st != cudaSuccess {
			t.Fatalf("cuMemcpyHtoD_v2(%d) returned %d", len(data), st)
		}
	})
	return ptr
}

func gpuFree(t *testing.T, c *CUDACopier, d *cudaDriver, ptr uint64) {
	inDevice0(t, c, d, func() {
		if st := d.MemFree(ptr); st != cudaSuccess {
			t.Errorf("cuMemFree_v2 returned %d", st)
		}
	})
}

// inDevice0 runs f with device 0's primary context current on this thread.
func inDevice0(t *testing.T, c *CUDACopier, d *cudaDriver, f func()) {
	t.Helper()
	pc, err := c.primaryContext(0)
	if err != nil {
		t.Fatal(err)
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if st := d.CtxSetCurrent(pc.ctx); st != cudaSuccess {
		t.Fatalf("cuCtxSetCurrent returned %d", st)
	}
	defer d.CtxSetCurrent(0)
	f()
}
