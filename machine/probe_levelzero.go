package machine

import (
	"context"
	"fmt"
)

// libLevelZero is the oneAPI Level Zero loader, as its soname.
const libLevelZero = "libze_loader.so.1"

// zeInitFlagGPUOnly is ZE_INIT_FLAG_GPU_ONLY: load GPU drivers only.
const zeInitFlagGPUOnly = 1

// zeStatusNames names the ze_result_t values an init can meet (ze_api.h).
var zeStatusNames = map[int64]string{
	0x1:        "ZE_RESULT_NOT_READY",
	0x70000001: "ZE_RESULT_ERROR_DEVICE_LOST",
	0x70000002: "ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY",
	0x70000003: "ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY",
	0x70010000: "ZE_RESULT_ERROR_INSUFFICIENT_PERMISSIONS",
	0x70010001: "ZE_RESULT_ERROR_NOT_AVAILABLE",
	0x70020000: "ZE_RESULT_ERROR_DEPENDENCY_UNAVAILABLE",
	0x78000001: "ZE_RESULT_ERROR_UNINITIALIZED",
	0x78000002: "ZE_RESULT_ERROR_UNSUPPORTED_VERSION",
	0x78000003: "ZE_RESULT_ERROR_UNSUPPORTED_FEATURE",
	0x78000004: "ZE_RESULT_ERROR_INVALID_ARGUMENT",
	0x7ffffffe: "ZE_RESULT_ERROR_UNKNOWN",
}

// levelZeroAPI is the part of Level Zero the level-zero probe calls: one
// method per C function, returning its ze_result_t. A nil handle array
// asks only for the count, as in C. levelZeroLoader implements it with
// purego; tests give fakes.
type levelZeroAPI interface {
	Init(flags uint32) uint32                                         // zeInit
	DriverGet(count *uint32, drivers *uintptr) uint32                 // zeDriverGet
	DeviceGet(driver uintptr, count *uint32, devices *uintptr) uint32 // zeDeviceGet
}

// levelZeroLoader is libze_loader.so.1 bound through purego; handles are
// uintptr.
type levelZeroLoader struct {
	zeInit      func(flags uint32) uint32
	zeDriverGet func(count *uint32, drivers *uintptr) uint32
	zeDeviceGet func(driver uintptr, count *uint32, devices *uintptr) uint32
}

// bindLevelZero loads libze_loader.so.1 and binds the probe's functions.
func bindLevelZero(env Env) (levelZeroAPI, error) {
	z := &levelZeroLoader{}
	err := bindLibrary(env, libLevelZero, []cSymbol{
		{"zeInit", &z.zeInit},
		{"zeDriverGet", &z.zeDriverGet},
		{"zeDeviceGet", &z.zeDeviceGet},
	})
	if err != nil {
		return nil, err
	}
	return z, nil
}

func (z *levelZeroLoader) Init(flags uint32) uint32 { return z.zeInit(flags) }
func (z *levelZeroLoader) DriverGet(n *uint32, drivers *uintptr) uint32 {
	return z.zeDriverGet(n, drivers)
}
func (z *levelZeroLoader) DeviceGet(driver uintptr, n *uint32, devices *uintptr) uint32 {
	return z.zeDeviceGet(driver, n, devices)
}

// probeLevelZero counts the GPUs of every Level Zero driver. PJRT's SYCL
// client reports OneAPIVersion whatever the driver, so no version is read.
func (d probeDrivers) probeLevelZero(_ context.Context, env Env, _ ProbeOptions) ([]Device, error) {
	api, err := d.levelZero(env)
	if err != nil {
		return nil, err
	}
	if st := api.Init(zeInitFlagGPUOnly); st != 0 {
		return nil, callFailed(libLevelZero, "zeInit", int64(st), zeStatusNames)
	}
	var nDrivers uint32
	if st := api.DriverGet(&nDrivers, nil); st != 0 {
		return nil, callFailed(libLevelZero, "zeDriverGet", int64(st), zeStatusNames)
	}
	if err := checkDeviceCount(libLevelZero, "zeDriverGet", int64(nDrivers)); err != nil {
		return nil, err
	}
	drivers := make([]uintptr, nDrivers)
	if st := api.DriverGet(&nDrivers, &drivers[0]); st != 0 {
		return nil, callFailed(libLevelZero, "zeDriverGet", int64(st), zeStatusNames)
	}
	total := int64(0)
	for _, h := range drivers[:min(int(nDrivers), len(drivers))] {
		var n uint32
		if st := api.DeviceGet(h, &n, nil); st != 0 {
			return nil, callFailed(libLevelZero, "zeDeviceGet", int64(st), zeStatusNames)
		}
		total += int64(n)
	}
	if err := checkDeviceCount(libLevelZero, "zeDeviceGet", total); err != nil {
		return nil, err
	}
	detail := fmt.Sprintf("Level Zero: %d GPU(s) from %d driver(s); PJRT's SYCL client reports %q whatever the driver", total, nDrivers, OneAPIVersion)
	return gpuDevices(int(total), ProbeLevelZero, OneAPIVersion, func(int) string { return detail }), nil
}
