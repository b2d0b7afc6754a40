package machine

import (
	"context"
	"fmt"
)

// cudaDriverAPI is the part of the CUDA driver API the cuda-driver probe
// calls: one method per C function, returning its CUresult. cudaDriver
// implements it with purego; tests give fakes, such as a half-installed
// driver whose cuInit fails.
type cudaDriverAPI interface {
	Init(flags uint32) int32               // cuInit
	DriverGetVersion(version *int32) int32 // cuDriverGetVersion
	DeviceGetCount(count *int32) int32     // cuDeviceGetCount
}

// probeCUDADriver asks libcuda.so.1 for its CUDA version and its devices.
// The library is never closed after cuInit: the driver starts threads
// that run its code.
func (d probeDrivers) probeCUDADriver(_ context.Context, env Env, _ ProbeOptions) ([]Device, error) {
	api, err := d.cuda(env)
	if err != nil {
		return nil, err
	}
	if st := api.Init(0); st != cudaSuccess {
		pe := cudaCallFailed("cuInit", st)
		if st == cudaErrorNoDevice {
			pe.Code = CodeNoDevices
		}
		return nil, pe
	}
	var version, count int32
	if st := api.DriverGetVersion(&version); st != cudaSuccess {
		return nil, cudaCallFailed("cuDriverGetVersion", st)
	}
	if version <= 0 {
		return nil, &ProbeError{Code: CodeBadOutput, Source: libCUDA, Message: fmt.Sprintf("cuDriverGetVersion gave version %d", version)}
	}
	if st := api.DeviceGetCount(&count); st != cudaSuccess {
		return nil, cudaCallFailed("cuDeviceGetCount", st)
	}
	if err := checkDeviceCount(libCUDA, "cuDeviceGetCount", int64(count)); err != nil {
		return nil, err
	}
	detail := nvidiaDetail(driverVersionFromProc(env), version)
	return gpuDevices(int(count), ProbeCUDADriver, fmt.Sprintf("cuda %d", version), func(int) string { return detail }), nil
}

// nvidiaDetail is the Detail of an NVIDIA device whose driver said its
// CUDA version: "driver 550.54.15, CUDA 12.4 (...)".
func nvidiaDetail(driver string, cudaVersion int32) string {
	s := fmt.Sprintf("CUDA %s (the driver's CUDA version; JAX reports the CUDA runtime jaxlib was built against)", cudaVersionText(cudaVersion))
	if driver != "" {
		s = "driver " + driver + ", " + s
	}
	return s
}
