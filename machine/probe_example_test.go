package machine_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing/fstest"

	"github.com/dlroute/dlroute/machine"
)

// A machine whose only trace of its NVIDIA GPU is what the kernel module
// writes under /proc: the device is an NVIDIA GPU of unknown CUDA version.
func ExampleProbe() {
	env := machine.Env{FS: fstest.MapFS{
		"proc/driver/nvidia/version": {Data: []byte("NVRM version: NVIDIA UNIX x86_64 Kernel Module  550.54.15  Tue Mar  5 22:23:56 UTC 2024\n" +
			"GCC version:  gcc version 12.2.0 (Debian 12.2.0-14) \n")},
		"proc/driver/nvidia/gpus/0000:18:00.0/information": {Data: []byte("Model: \t\t NVIDIA H100 80GB HBM3\n" +
			"Bus Location: \t 0000:18:00.0\nDevice Minor: \t 0\nGPU Excluded:\t No\n")},
	}}
	devices, attempts := machine.Probe(context.Background(), env, machine.ProbeOptions{})
	for _, d := range devices {
		fmt.Printf("%d %s %q (%s)\n", d.Index, d.Platform, d.PlatformVersion, d.Probe)
	}
	for _, a := range attempts {
		fmt.Println(a)
	}
	// Output:
	// 0 gpu "cuda unknown" (proc-nvidia)
	// cuda-driver: libcuda.so.1: this Env loads no libraries (Env.Open is nil)
	// nvml: libnvidia-ml.so.1: this Env loads no libraries (Env.Open is nil)
	// proc-nvidia: ok
	// rocm: /opt/rocm/.info/version: not found
	// amdgpu-sysfs: /sys/module/amdgpu: the amdgpu kernel module is not loaded
	// level-zero: libze_loader.so.1: this Env loads no libraries (Env.Open is nil)
}

// Asking JAX gives the exact string it tests, here through a fake Run;
// SystemEnv runs Python for real.
func ExampleProbe_askJAX() {
	env := machine.Env{Run: func(ctx context.Context, name string, args ...string) ([]byte, error) {
		return []byte(`{"jax": "0.7.2", "devices": [{"id": 0, "local_hardware_id": 0, "platform": "gpu", "platform_version": "PJRT C API\ncuda 12080"}]}`), nil
	}}
	devices, _ := machine.Probe(context.Background(), env, machine.ProbeOptions{AskJAX: true})
	out, _ := json.Marshal(devices)
	fmt.Println(string(out))
	// Output:
	// [{"index":0,"platform":"gpu","platform_version":"PJRT C API\ncuda 12080","probe":"jax","detail":"jax 0.7.2, device id 0: the exact client.platform_version"}]
}

// The real machine. What it answers depends on the machine, so this checks
// what holds on every one: at least one device (the CPU where no GPU probe
// answers), each from a probe that answered, and every probe that did not
// saying why with a code.
func ExampleSystemEnv() {
	devices, attempts := machine.Probe(context.Background(), machine.SystemEnv(), machine.ProbeOptions{})
	answered, explained := map[string]bool{}, true
	for _, a := range attempts {
		var pe *machine.ProbeError
		switch {
		case a.Err == nil:
			answered[a.Probe] = true
		case !errors.As(a.Err, &pe) || pe.Code == "":
			explained = false
			fmt.Println("no code:", a)
		}
	}
	fromAnswered := len(devices) > 0
	for _, d := range devices {
		fromAnswered = fromAnswered && answered[d.Probe]
	}
	fmt.Println("devices, each from a probe that answered:", fromAnswered)
	fmt.Println("every other probe says why, with a code:", explained)
	// Output:
	// devices, each from a probe that answered: true
	// every other probe says why, with a code: true
}

func ExampleAttempt_MarshalJSON() {
	out, _ := json.Marshal([]machine.Attempt{
		{Probe: machine.ProbeCUDADriver, Err: &machine.ProbeError{Code: machine.CodeLoadFailed, Source: "libcuda.so.1", Message: "cannot open shared object file: No such file or directory"}},
		{Probe: machine.ProbeCPU},
	})
	fmt.Println(string(out))
	// Output:
	// [{"probe":"cuda-driver","error":"libcuda.so.1: cannot open shared object file: No such file or directory","code":"load_failed"},{"probe":"cpu"}]
}

// Where there is no CUDA driver, NewCUDACopier says so with a stable code;
// a host then copies with HostCopier, or not at all.
func ExampleNewCUDACopier() {
	env := machine.Env{Open: func(lib string) (machine.Library, error) {
		return nil, errors.New(lib + ": cannot open shared object file: No such file or directory")
	}}
	copier, err := machine.NewCUDACopier(env) // machine.SystemEnv() on a real machine
	var pe *machine.ProbeError
	if errors.As(err, &pe) {
		fmt.Println(pe.Code)
		fmt.Println(err)
		return
	}
	// Where the driver loads, a host copies device memory to the host:
	//	copier.CopyToHost(ctx, machine.Buffer{DeviceType: machine.DeviceCUDA, Ptr: devicePtr, Size: n})
	defer copier.Close()

	// Output:
	// load_failed
	// libcuda.so.1: cannot open shared object file: No such file or directory
}

// The "ask the machine" path: a host function that reads this machine
// once and answers each device's platform_version.
func ExamplePlatformVersion() {
	env := machine.Env{FS: fstest.MapFS{
		"opt/rocm/.info/version":                        {Data: []byte("6.2.0-66\n")},
		"sys/class/kfd/kfd/topology/nodes/1/properties": {Data: []byte("simd_count 304\ngfx_target_version 90402\n")},
	}}
	ask := machine.PlatformVersion(env, machine.ProbeOptions{})
	v, err := ask(context.Background(), 0)
	fmt.Printf("%q %v\n", v, err)
	_, err = ask(context.Background(), 3)
	fmt.Println(err != nil)
	// Output:
	// "rocm 60200" <nil>
	// true
}
