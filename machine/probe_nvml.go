package machine

import (
	"bytes"
	"context"
	"fmt"
)

// libNVML is NVIDIA's management library, as its soname.
const libNVML = "libnvidia-ml.so.1"

// nvmlStatusNames names the nvmlReturn_t values an init can meet (nvml.h).
var nvmlStatusNames = map[int64]string{
	1:   "NVML_ERROR_UNINITIALIZED",
	2:   "NVML_ERROR_INVALID_ARGUMENT",
	3:   "NVML_ERROR_NOT_SUPPORTED",
	4:   "NVML_ERROR_NO_PERMISSION",
	6:   "NVML_ERROR_NOT_FOUND",
	7:   "NVML_ERROR_INSUFFICIENT_SIZE",
	9:   "NVML_ERROR_DRIVER_NOT_LOADED",
	10:  "NVML_ERROR_TIMEOUT",
	12:  "NVML_ERROR_LIBRARY_NOT_FOUND",
	13:  "NVML_ERROR_FUNCTION_NOT_FOUND",
	15:  "NVML_ERROR_GPU_IS_LOST",
	17:  "NVML_ERROR_OPERATING_SYSTEM",
	18:  "NVML_ERROR_LIB_RM_VERSION_MISMATCH",
	999: "NVML_ERROR_UNKNOWN",
}

// nvmlAPI is the part of NVML the nvml probe calls: one method per C
// function, returning its nvmlReturn_t. nvmlLibrary implements it with
// purego; tests give fakes.
type nvmlAPI interface {
	Init() int32                                     // nvmlInit_v2
	SystemGetCudaDriverVersion(version *int32) int32 // nvmlSystemGetCudaDriverVersion
	SystemGetDriverVersion(buf []byte) int32         // nvmlSystemGetDriverVersion(buf, len(buf))
	DeviceGetCount(count *uint32) int32              // nvmlDeviceGetCount_v2
	Shutdown() int32                                 // nvmlShutdown
}

// nvmlLibrary is libnvidia-ml.so.1 bound through purego.
type nvmlLibrary struct {
	nvmlInit_v2                    func() int32
	nvmlSystemGetCudaDriverVersion func(version *int32) int32
	nvmlSystemGetDriverVersion     func(buf *byte, n uint32) int32
	nvmlDeviceGetCount_v2          func(count *uint32) int32
	nvmlShutdown                   func() int32
}

// bindNVML loads libnvidia-ml.so.1 and binds the probe's functions.
func bindNVML(env Env) (nvmlAPI, error) {
	n := &nvmlLibrary{}
	err := bindLibrary(env, libNVML, []cSymbol{
		{"nvmlInit_v2", &n.nvmlInit_v2},
		{"nvmlSystemGetCudaDriverVersion", &n.nvmlSystemGetCudaDriverVersion},
		{"nvmlSystemGetDriverVersion", &n.nvmlSystemGetDriverVersion},
		{"nvmlDeviceGetCount_v2", &n.nvmlDeviceGetCount_v2},
		{"nvmlShutdown", &n.nvmlShutdown},
	})
	if err != nil {
		return nil, err
	}
	return n, nil
}

func (n *nvmlLibrary) Init() int32 { return n.nvmlInit_v2() }
func (n *nvmlLibrary) SystemGetCudaDriverVersion(v *int32) int32 {
	return n.nvmlSystemGetCudaDriverVersion(v)
}
func (n *nvmlLibrary) SystemGetDriverVersion(buf []byte) int32 {
	return n.nvmlSystemGetDriverVersion(&buf[0], uint32(len(buf)))
}
func (n *nvmlLibrary) DeviceGetCount(c *uint32) int32 { return n.nvmlDeviceGetCount_v2(c) }
func (n *nvmlLibrary) Shutdown() int32                { return n.nvmlShutdown() }

// nvmlDriverVersionSize is NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE.
const nvmlDriverVersionSize = 80

// probeNVML asks NVML for the driver's CUDA version and the GPU count:
// the same numbers as the CUDA driver, for machines where libcuda.so.1
// is missing (a container given only the management library) or fails.
func (d probeDrivers) probeNVML(_ context.Context, env Env, _ ProbeOptions) ([]Device, error) {
	api, err := d.nvml(env)
	if err != nil {
		return nil, err
	}
	if st := api.Init(); st != 0 {
		return nil, callFailed(libNVML, "nvmlInit_v2", int64(st), nvmlStatusNames)
	}
	defer api.Shutdown()
	var version int32
	var count uint32
	if st := api.SystemGetCudaDriverVersion(&version); st != 0 {
		return nil, callFailed(libNVML, "nvmlSystemGetCudaDriverVersion", int64(st), nvmlStatusNames)
	}
	if version <= 0 {
		return nil, &ProbeError{Code: CodeBadOutput, Source: libNVML, Message: fmt.Sprintf("nvmlSystemGetCudaDriverVersion gave version %d", version)}
	}
	if st := api.DeviceGetCount(&count); st != 0 {
		return nil, callFailed(libNVML, "nvmlDeviceGetCount_v2", int64(st), nvmlStatusNames)
	}
	if err := checkDeviceCount(libNVML, "nvmlDeviceGetCount_v2", int64(count)); err != nil {
		return nil, err
	}
	var driver []byte
	buf := make([]byte, nvmlDriverVersionSize)
	if api.SystemGetDriverVersion(buf) == 0 {
		driver, _, _ = bytes.Cut(buf, []byte{0})
	}
	detail := nvidiaDetail(string(driver), version)
	return gpuDevices(int(count), ProbeNVML, fmt.Sprintf("cuda %d", version), func(int) string { return detail }), nil
}
