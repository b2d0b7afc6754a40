package machine

import (
	"context"
	"fmt"
	"io/fs"
	"strings"

	"github.com/dlroute/dlroute/engine"
)

// probeDrivers are the driver-library bindings the probes call: purego in
// production, fakes in tests. Go functions cannot stand in for C function
// pointers, so this, and not Env.Open, is where tests give fixed answers
// from a driver.
type probeDrivers struct {
	cuda      func(Env) (cudaDriverAPI, error)
	nvml      func(Env) (nvmlAPI, error)
	levelZero func(Env) (levelZeroAPI, error)
}

// systemDrivers loads the real libraries through Env.Open.
var systemDrivers = probeDrivers{
	cuda:      func(env Env) (cudaDriverAPI, error) { return bindCUDA(env, false) },
	nvml:      bindNVML,
	levelZero: bindLevelZero,
}

// probeStep is one probe: it answers with at least one device or says why not.
type probeStep struct {
	name string
	run  func(ctx context.Context, env Env, opts ProbeOptions) ([]Device, error)
}

// probe is Probe with the given bindings; the order is documented there.
func (d probeDrivers) probe(ctx context.Context, env Env, opts ProbeOptions) ([]Device, []Attempt) {
	var attempts []Attempt
	try := func(p probeStep) ([]Device, bool) {
		devices, err := runProbeStep(ctx, env, opts, p)
		attempts = append(attempts, Attempt{Probe: p.name, Err: err})
		return devices, err == nil
	}
	if opts.AskJAX {
		if devices, ok := try(probeStep{ProbeJAX, probeJAX}); ok {
			return devices, attempts
		}
	}
	vendors := [][]probeStep{
		{{ProbeCUDADriver, d.probeCUDADriver}, {ProbeNVML, d.probeNVML}, {ProbeProcNVIDIA, probeProcNVIDIA}},
		{{ProbeROCm, probeROCm}, {ProbeAMDGPUSysfs, probeAMDGPUSysfs}},
		{{ProbeLevelZero, d.probeLevelZero}},
	}
	var devices []Device
	for _, vendor := range vendors {
		for _, p := range vendor {
			if found, ok := try(p); ok {
				devices = append(devices, found...)
				break
			}
		}
	}
	if len(devices) == 0 {
		devices, _ = try(probeStep{ProbeCPU, probeCPU})
	}
	return devices, attempts
}

// runProbeStep runs one probe, holding it to its contract: a panic in Go
// code is recovered into an error, an answer without devices is
// CodeNoDevices, and an ended ctx stops it before it starts.
func runProbeStep(ctx context.Context, env Env, opts ProbeOptions, p probeStep) (devices []Device, err error) {
	if ctx.Err() != nil {
		return nil, &ProbeError{Code: engine.CodeCanceled, Source: "context", Message: "ended before this probe ran: " + context.Cause(ctx).Error(), err: ctx.Err()}
	}
	defer func() {
		if r := recover(); r != nil {
			devices, err = nil, &ProbeError{Code: CodeInternal, Source: "probe", Message: fmt.Sprintf("panic: %v", r)}
		}
	}()
	devices, err = p.run(ctx, env, opts)
	if err == nil && len(devices) == 0 {
		err = &ProbeError{Code: CodeNoDevices, Source: "probe", Message: "answered with no device"}
	}
	if err != nil {
		devices = nil
	}
	return devices, err
}

// probeCPU is the last resort: every machine has a CPU, which PJRT's CPU
// client calls "cpu".
func probeCPU(context.Context, Env, ProbeOptions) ([]Device, error) {
	return []Device{{Index: 0, Platform: "cpu", PlatformVersion: "cpu", Probe: ProbeCPU, Detail: "no GPU probe answered"}}, nil
}

// gpuDevices makes n devices of one probe, numbered from 0 as their driver does.
func gpuDevices(n int, probe, version string, detail func(i int) string) []Device {
	devices := make([]Device, n)
	for i := range devices {
		devices[i] = Device{Index: i, Platform: "gpu", PlatformVersion: version, Probe: probe, Detail: detail(i)}
	}
	return devices
}

// maxDevices bounds the device count a driver may report: more is a
// broken answer, not a machine.
const maxDevices = 4096

// checkDeviceCount refuses a count of devices that is 0 or past maxDevices.
func checkDeviceCount(lib, call string, n int64) error {
	switch {
	case n <= 0:
		return &ProbeError{Code: CodeNoDevices, Source: lib, Message: fmt.Sprintf("%s gave %d devices", call, n)}
	case n > maxDevices:
		return &ProbeError{Code: CodeBadOutput, Source: lib, Message: fmt.Sprintf("%s gave %d devices, more than %d", call, n, maxDevices)}
	}
	return nil
}

// machinePath turns an absolute path into a path of Env.FS.
func machinePath(path string) string {
	if p := strings.TrimLeft(path, "/"); p != "" {
		return p
	}
	return "."
}

// readMachineFile reads an absolute path from env.FS; the error is a
// *ProbeError naming the path.
func readMachineFile(env Env, path string) (string, error) {
	if env.FS == nil {
		return "", fileError(path, fs.ErrNotExist)
	}
	data, err := fs.ReadFile(env.FS, machinePath(path))
	if err != nil {
		return "", fileError(path, err)
	}
	return string(data), nil
}

// readMachineDir lists an absolute directory of env.FS, sorted by name.
func readMachineDir(env Env, path string) ([]fs.DirEntry, error) {
	if env.FS == nil {
		return nil, fileError(path, fs.ErrNotExist)
	}
	entries, err := fs.ReadDir(env.FS, machinePath(path))
	if err != nil {
		return nil, fileError(path, err)
	}
	return entries, nil
}

// machineHas reports whether an absolute path exists in env.FS.
func machineHas(env Env, path string) bool {
	if env.FS == nil {
		return false
	}
	_, err := fs.Stat(env.FS, machinePath(path))
	return err == nil
}
