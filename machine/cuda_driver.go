package machine

import "fmt"

// libCUDA is the CUDA driver library, as its soname.
const libCUDA = "libcuda.so.1"

// cudaSuccess and cudaErrorNoDevice are the CUresults the code tests for.
const (
	cudaSuccess       = 0
	cudaErrorNoDevice = 100
)

// cudaStatusNames names the CUresults a probe or a copy is likely to meet
// (cuda.h, enum cudaError_enum).
var cudaStatusNames = map[int64]string{
	1:   "CUDA_ERROR_INVALID_VALUE",
	2:   "CUDA_ERROR_OUT_OF_MEMORY",
	3:   "CUDA_ERROR_NOT_INITIALIZED",
	4:   "CUDA_ERROR_DEINITIALIZED",
	34:  "CUDA_ERROR_STUB_LIBRARY",
	46:  "CUDA_ERROR_DEVICE_UNAVAILABLE",
	100: "CUDA_ERROR_NO_DEVICE",
	101: "CUDA_ERROR_INVALID_DEVICE",
	102: "CUDA_ERROR_DEVICE_NOT_LICENSED",
	201: "CUDA_ERROR_INVALID_CONTEXT",
	304: "CUDA_ERROR_OPERATING_SYSTEM",
	400: "CUDA_ERROR_INVALID_HANDLE",
	700: "CUDA_ERROR_ILLEGAL_ADDRESS",
	800: "CUDA_ERROR_NOT_PERMITTED",
	801: "CUDA_ERROR_NOT_SUPPORTED",
	802: "CUDA_ERROR_SYSTEM_NOT_READY",
	803: "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH",
	804: "CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE",
	999: "CUDA_ERROR_UNKNOWN",
}

// cudaCallFailed is the error of a CUDA driver call that returned status.
func cudaCallFailed(call string, status int32) *ProbeError {
	return callFailed(libCUDA, call, int64(status), cudaStatusNames)
}

// cudaVersionText writes a CUDA version number as people do: 12040 is "12.4".
func cudaVersionText(v int32) string { return fmt.Sprintf("%d.%d", v/1000, v%1000/10) }

// cudaDriver is libcuda.so.1 bound through purego. Each field has the C
// signature of the function it calls, CUresult being int32, CUdevice
// int32, CUcontext uintptr and CUdeviceptr uint64. Only the probe's
// functions are bound unless memory functions were asked for.
type cudaDriver struct {
	cuInit             func(flags uint32) int32
	cuDriverGetVersion func(version *int32) int32
	cuDeviceGetCount   func(count *int32) int32

	cuDeviceGet                  func(dev *int32, ordinal int32) int32
	cuDevicePrimaryCtxRetain     func(ctx *uintptr, dev int32) int32
	cuDevicePrimaryCtxRelease_v2 func(dev int32) int32
	cuCtxGetCurrent              func(ctx *uintptr) int32
	cuCtxSetCurrent              func(ctx uintptr) int32
	cuMemcpyDtoH_v2              func(dst *byte, src uint64, n uintptr) int32
	cuMemcpyHtoD_v2              func(dst uint64, src *byte, n uintptr) int32
	cuMemAlloc_v2                func(ptr *uint64, n uintptr) int32
	cuMemFree_v2                 func(ptr uint64) int32
}

// bindCUDA loads libcuda.so.1 and binds the probe's functions, and with
// memory also the copier's. It calls nothing.
func bindCUDA(env Env, memory bool) (*cudaDriver, error) {
	d := &cudaDriver{}
	syms := []cSymbol{
		{"cuInit", &d.cuInit},
		{"cuDriverGetVersion", &d.cuDriverGetVersion},
		{"cuDeviceGetCount", &d.cuDeviceGetCount},
	}
	if memory {
		syms = append(syms,
			cSymbol{"cuDeviceGet", &d.cuDeviceGet},
			cSymbol{"cuDevicePrimaryCtxRetain", &d.cuDevicePrimaryCtxRetain},
			cSymbol{"cuDevicePrimaryCtxRelease_v2", &d.cuDevicePrimaryCtxRelease_v2},
			cSymbol{"cuCtxGetCurrent", &d.cuCtxGetCurrent},
			cSymbol{"cuCtxSetCurrent", &d.cuCtxSetCurrent},
			cSymbol{"cuMemcpyDtoH_v2", &d.cuMemcpyDtoH_v2},
			cSymbol{"cuMemcpyHtoD_v2", &d.cuMemcpyHtoD_v2},
			cSymbol{"cuMemAlloc_v2", &d.cuMemAlloc_v2},
			cSymbol{"cuMemFree_v2", &d.cuMemFree_v2},
		)
	}
	if err := bindLibrary(env, libCUDA, syms); err != nil {
		return nil, err
	}
	return d, nil
}

func (d *cudaDriver) Init(flags uint32) int32             { return d.cuInit(flags) }
func (d *cudaDriver) DriverGetVersion(v *int32) int32     { return d.cuDriverGetVersion(v) }
func (d *cudaDriver) DeviceGetCount(n *int32) int32       { return d.cuDeviceGetCount(n) }
func (d *cudaDriver) DeviceGet(dev *int32, i int32) int32 { return d.cuDeviceGet(dev, i) }
func (d *cudaDriver) DevicePrimaryCtxRetain(ctx *uintptr, dev int32) int32 {
	return d.cuDevicePrimaryCtxRetain(ctx, dev)
}
func (d *cudaDriver) DevicePrimaryCtxRelease(dev int32) int32 {
	return d.cuDevicePrimaryCtxRelease_v2(dev)
}
func (d *cudaDriver) CtxGetCurrent(ctx *uintptr) int32 { return d.cuCtxGetCurrent(ctx) }
func (d *cudaDriver) CtxSetCurrent(ctx uintptr) int32  { return d.cuCtxSetCurrent(ctx) }

// MemcpyDtoH copies len(dst) bytes from device address src; dst is not
// empty. purego keeps dst alive and in place for the call.
func (d *cudaDriver) MemcpyDtoH(dst []byte, src uint64) int32 {
	return d.cuMemcpyDtoH_v2(&dst[0], src, uintptr(len(dst)))
}

// MemcpyHtoD copies src, not empty, to device address dst (tests only).
func (d *cudaDriver) MemcpyHtoD(dst uint64, src []byte) int32 {
	return d.cuMemcpyHtoD_v2(dst, &src[0], uintptr(len(src)))
}

// MemAlloc allocates n bytes of device memory in the current context (tests only).
func (d *cudaDriver) MemAlloc(ptr *uint64, n uintptr) int32 { return d.cuMemAlloc_v2(ptr, n) }

// MemFree frees device memory MemAlloc gave (tests only).
func (d *cudaDriver) MemFree(ptr uint64) int32 { return d.cuMemFree_v2(ptr) }
