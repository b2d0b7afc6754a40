package machine

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// deviceLine writes a device as one line of a want list.
func deviceLine(d Device) string {
	return fmt.Sprintf("%d %s %q %s | %s", d.Index, d.Platform, d.PlatformVersion, d.Probe, d.Detail)
}

// attemptLine writes an attempt as "probe ok" or "probe code: error".
func attemptLine(a Attempt) string {
	if a.Err == nil {
		return a.Probe + " ok"
	}
	var pe *ProbeError
	if !errors.As(a.Err, &pe) {
		return a.Probe + " (not a *ProbeError): " + a.Err.Error()
	}
	return fmt.Sprintf("%s %s: %v", a.Probe, pe.Code, a.Err)
}

const (
	cudaDetail = "CUDA 12.4 (the driver's CUDA version; JAX reports the CUDA runtime jaxlib was built against)"
	noCUDA     = "cuda-driver load_failed: libcuda.so.1: cannot open shared object file: No such file or directory"
	noNVML     = "nvml load_failed: libnvidia-ml.so.1: cannot open shared object file: No such file or directory"
	noProc     = "proc-nvidia not_installed: /proc/driver/nvidia/version: not found"
	noROCm     = "rocm not_installed: /opt/rocm/.info/version: not found"
	noAMDGPU   = "amdgpu-sysfs not_installed: /sys/module/amdgpu: the amdgpu kernel module is not loaded"
	noZE       = "level-zero load_failed: libze_loader.so.1: cannot open shared object file: No such file or directory"
	cpuLine    = `0 cpu "cpu" cpu | no GPU probe answered`
)

const jaxGPUAnswer = `WARNING: a plugin printed this on stdout
{"jax": "0.7.2", "devices": [{"id": 0, "local_hardware_id": 0, "platform": "gpu", "platform_version": "PJRT C API\ncuda 12080"}, {"id": 1, "local_hardware_id": 1, "platform": "gpu", "platform_version": "PJRT C API\ncuda 12080"}]}
`

func TestProbe(t *testing.T) {
	canceled, cancel := context.WithCancel(context.Background())
	cancel()
	h100 := &fakeCUDA{version: 12040, count: 2}
	tests := []struct {
		name    string
		machine string // testdata/machines/<machine>.txtar
		libs    fakes
		getenv  map[string]string
		run     func(context.Context, string, ...string) ([]byte, error)
		opts    ProbeOptions
		ctx     context.Context
		devices []string
		tried   []string
	}{{
		name:    "a machine with no GPU driver gives one cpu device",
		machine: "cpu-only",
		devices: []string{cpuLine},
		tried:   []string{noCUDA, noNVML, noProc, noROCm, noAMDGPU, noZE, "cpu ok"},
	}, {
		name:    "the CUDA driver answers with its own CUDA version",
		machine: "nvidia-2xh100",
		libs:    fakes{cuda: h100},
		devices: []string{
			`0 gpu "cuda 12040" cuda-driver | driver 550.54.15, ` + cudaDetail,
			`1 gpu "cuda 12040" cuda-driver | driver 550.54.15, ` + cudaDetail,
		},
		tried: []string{"cuda-driver ok", noROCm, noAMDGPU, noZE},
	}, {
		name:    "a half-installed libcuda whose cuInit fails falls back to NVML",
		machine: "nvidia-2xh100",
		libs: fakes{
			cuda: &fakeCUDA{initStatus: 803},
			nvml: &fakeNVML{version: 12040, count: 1, driver: "550.54.15"},
		},
		devices: []string{`0 gpu "cuda 12040" nvml | driver 550.54.15, ` + cudaDetail},
		tried: []string{
			"cuda-driver call_failed: libcuda.so.1: cuInit returned 803 (CUDA_ERROR_SYSTEM_DRIVER_MISMATCH)",
			"nvml ok", noROCm, noAMDGPU, noZE,
		},
	}, {
		name:    "a stub libcuda and a mismatched NVML fall back to /proc: the CUDA version is unknown",
		machine: "nvidia-2xh100",
		libs: fakes{
			cuda: &fakeCUDA{initStatus: 34},
			nvml: &fakeNVML{initStatus: 18},
		},
		devices: []string{
			`0 gpu "cuda unknown" proc-nvidia | NVIDIA H100 80GB HBM3 at 0000:18:00.0, kernel module 550.54.15; CUDA version unknown (read from /proc only)`,
			`1 gpu "cuda unknown" proc-nvidia | NVIDIA H100 80GB HBM3 at 0000:2a:00.0, kernel module 550.54.15; CUDA version unknown (read from /proc only)`,
		},
		tried: []string{
			"cuda-driver call_failed: libcuda.so.1: cuInit returned 34 (CUDA_ERROR_STUB_LIBRARY)",
			"nvml call_failed: libnvidia-ml.so.1: nvmlInit_v2 returned 18 (NVML_ERROR_LIB_RM_VERSION_MISMATCH)",
			"proc-nvidia ok", noROCm, noAMDGPU, noZE,
		},
	}, {
		name:    "a GPU the NVIDIA driver excludes is left out",
		machine: "nvidia-open-excluded",
		devices: []string{`0 gpu "cuda unknown" proc-nvidia | NVIDIA GeForce RTX 4090 at 0000:01:00.0, kernel module 555.58.02; CUDA version unknown (read from /proc only)`},
		tried:   []string{noCUDA, noNVML, "proc-nvidia ok", noROCm, noAMDGPU, noZE},
	}, {
		name:    "cuInit saying there is no device, and a module serving none, give the cpu",
		machine: "nvidia-module-no-gpu",
		libs:    fakes{cuda: &fakeCUDA{initStatus: 100}},
		devices: []string{cpuLine},
		tried: []string{
			"cuda-driver no_devices: libcuda.so.1: cuInit returned 100 (CUDA_ERROR_NO_DEVICE)", noNVML,
			"proc-nvidia no_devices: /proc/driver/nvidia/gpus: not found: the kernel module 535.183.01 serves no GPU",
			noROCm, noAMDGPU, noZE, "cpu ok",
		},
	}, {
		name:    "a driver reporting zero devices is not an answer",
		machine: "cpu-only",
		libs:    fakes{cuda: &fakeCUDA{version: 12040, count: 0}},
		devices: []string{cpuLine},
		tried:   []string{"cuda-driver no_devices: libcuda.so.1: cuDeviceGetCount gave 0 devices", noNVML, noProc, noROCm, noAMDGPU, noZE, "cpu ok"},
	}, {
		name:    "a probe that panics is reported and the next one tried",
		machine: "nvidia-2xh100",
		libs:    fakes{cuda: &fakeCUDA{panics: true}, nvml: &fakeNVML{version: 12040, count: 2}},
		devices: []string{`0 gpu "cuda 12040" nvml | ` + cudaDetail, `1 gpu "cuda 12040" nvml | ` + cudaDetail},
		tried:   []string{"cuda-driver internal: probe: panic: fake driver bug", "nvml ok", noROCm, noAMDGPU, noZE},
	}, {
		name:    "ROCm's version file gives TF_ROCM_VERSION; GPUs are the KFD nodes with SIMDs",
		machine: "amd-2xmi300x-rocm",
		devices: []string{
			`0 gpu "rocm 60200" rocm | ROCm 6.2.0-66, amdgpu 6.8.5, gfx942 (KFD node 1)`,
			`1 gpu "rocm 60200" rocm | ROCm 6.2.0-66, amdgpu 6.8.5, gfx942 (KFD node 2)`,
		},
		tried: []string{noCUDA, noNVML, noProc, "rocm ok", noZE},
	}, {
		name:    "the in-tree amdgpu module without ROCm: the ROCm version is unknown",
		machine: "amd-rx7900-intree",
		devices: []string{`0 gpu "rocm unknown" amdgpu-sysfs | amdgpu (in-tree), no ROCm install: ROCm version unknown, gfx1100 (KFD node 1)`},
		tried:   []string{noCUDA, noNVML, noProc, noROCm, "amdgpu-sysfs ok", noZE},
	}, {
		name:    "without the KFD topology, AMD's render nodes count and Intel's do not",
		machine: "amd-container-render-nodes",
		devices: []string{`0 gpu "rocm 60102" rocm | ROCm 6.1.2-119, /dev/dri/renderD129`},
		tried:   []string{noCUDA, noNVML, noProc, "rocm ok", noZE},
	}, {
		name:    "ROCm installed without an AMD GPU gives the cpu",
		machine: "rocm-no-gpu",
		devices: []string{cpuLine},
		tried: []string{noCUDA, noNVML, noProc,
			"rocm no_devices: /sys/class/kfd/kfd/topology/nodes: not found, nor /dev/dri: no AMD GPU",
			noAMDGPU, noZE, "cpu ok"},
	}, {
		name:    "ROCM_PATH moves the install",
		machine: "amd-2xmi300x-rocm",
		getenv:  map[string]string{"ROCM_PATH": "/opt/rocm-6.3.1/"},
		devices: []string{
			`0 gpu "rocm unknown" amdgpu-sysfs | amdgpu 6.8.5, no ROCm install: ROCm version unknown, gfx942 (KFD node 1)`,
			`1 gpu "rocm unknown" amdgpu-sysfs | amdgpu 6.8.5, no ROCm install: ROCm version unknown, gfx942 (KFD node 2)`,
		},
		tried: []string{noCUDA, noNVML, noProc, "rocm not_installed: /opt/rocm-6.3.1/.info/version: not found", "amdgpu-sysfs ok", noZE},
	}, {
		name:    "Level Zero GPUs are oneapi 2026.0, as PJRT's SYCL client says",
		machine: "cpu-only",
		libs:    fakes{levelZero: &fakeLevelZero{devices: []uint32{2, 0}}},
		devices: []string{
			`0 gpu "oneapi 2026.0" level-zero | Level Zero: 2 GPU(s) from 2 driver(s); PJRT's SYCL client reports "oneapi 2026.0" whatever the driver`,
			`1 gpu "oneapi 2026.0" level-zero | Level Zero: 2 GPU(s) from 2 driver(s); PJRT's SYCL client reports "oneapi 2026.0" whatever the driver`,
		},
		tried: []string{noCUDA, noNVML, noProc, noROCm, noAMDGPU, "level-zero ok"},
	}, {
		name:    "a Level Zero loader without a GPU driver",
		machine: "cpu-only",
		libs:    fakes{levelZero: &fakeLevelZero{initStatus: 0x78000001}},
		devices: []string{cpuLine},
		tried:   []string{noCUDA, noNVML, noProc, noROCm, noAMDGPU, "level-zero call_failed: libze_loader.so.1: zeInit returned 0x78000001 (ZE_RESULT_ERROR_UNINITIALIZED)", "cpu ok"},
	}, {
		name:    "NVIDIA and Intel GPUs both answer, each numbered from 0, NVIDIA first",
		machine: "nvidia-2xh100",
		libs:    fakes{cuda: &fakeCUDA{version: 12040, count: 1}, levelZero: &fakeLevelZero{devices: []uint32{1}}},
		devices: []string{
			`0 gpu "cuda 12040" cuda-driver | driver 550.54.15, ` + cudaDetail,
			`0 gpu "oneapi 2026.0" level-zero | Level Zero: 1 GPU(s) from 1 driver(s); PJRT's SYCL client reports "oneapi 2026.0" whatever the driver`,
		},
		tried: []string{"cuda-driver ok", noROCm, noAMDGPU, "level-zero ok"},
	}, {
		name:    "JAX, when asked, answers alone with the exact string",
		machine: "nvidia-2xh100",
		libs:    fakes{cuda: h100},
		run:     fakeRun(jaxGPUAnswer, nil),
		opts:    ProbeOptions{AskJAX: true},
		devices: []string{
			`0 gpu "PJRT C API\ncuda 12080" jax | jax 0.7.2, device id 0: the exact client.platform_version`,
			`1 gpu "PJRT C API\ncuda 12080" jax | jax 0.7.2, device id 1: the exact client.platform_version`,
		},
		tried: []string{"jax ok"},
	}, {
		name:    "Python without JAX: the hardware probes answer",
		machine: "nvidia-2xh100",
		libs:    fakes{cuda: h100},
		run:     fakeRun("", fmt.Errorf("exit status 1: ModuleNotFoundError: No module named 'jax'")),
		opts:    ProbeOptions{AskJAX: true, Python: "/usr/bin/python3.12"},
		devices: []string{
			`0 gpu "cuda 12040" cuda-driver | driver 550.54.15, ` + cudaDetail,
			`1 gpu "cuda 12040" cuda-driver | driver 550.54.15, ` + cudaDetail,
		},
		tried: []string{"jax command_failed: /usr/bin/python3.12: exit status 1: ModuleNotFoundError: No module named 'jax'", "cuda-driver ok", noROCm, noAMDGPU, noZE},
	}, {
		name:    "no Python at all",
		machine: "cpu-only",
		run:     fakeRun("", &exec.Error{Name: "python3", Err: exec.ErrNotFound}),
		opts:    ProbeOptions{AskJAX: true},
		devices: []string{cpuLine},
		tried:   []string{"jax not_installed: python3: not found", noCUDA, noNVML, noProc, noROCm, noAMDGPU, noZE, "cpu ok"},
	}, {
		name:    "JAX printing something else",
		machine: "cpu-only",
		run:     fakeRun("Traceback (most recent call last):\n", nil),
		opts:    ProbeOptions{AskJAX: true},
		devices: []string{cpuLine},
		tried:   []string{`jax bad_output: python3: JAX's answer is not JSON: "Traceback (most recent call last):"`, noCUDA, noNVML, noProc, noROCm, noAMDGPU, noZE, "cpu ok"},
	}, {
		name:    "an ended context tries nothing and makes up no cpu",
		machine: "nvidia-2xh100",
		libs:    fakes{cuda: h100},
		ctx:     canceled,
		tried: []string{
			"cuda-driver canceled: context: ended before this probe ran: context canceled",
			"nvml canceled: context: ended before this probe ran: context canceled",
			"proc-nvidia canceled: context: ended before this probe ran: context canceled",
			"rocm canceled: context: ended before this probe ran: context canceled",
			"amdgpu-sysfs canceled: context: ended before this probe ran: context canceled",
			"level-zero canceled: context: ended before this probe ran: context canceled",
			"cpu canceled: context: ended before this probe ran: context canceled",
		},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := Env{FS: machineFS(t, tt.machine), Run: tt.run}
			if tt.getenv != nil {
				env.Getenv = func(k string) string { return tt.getenv[k] }
			}
			ctx := tt.ctx
			if ctx == nil {
				ctx = context.Background()
			}
			devices, attempts := tt.libs.drivers().probe(ctx, env, tt.opts)
			var gotDevices, gotTried []string
			for _, d := range devices {
				gotDevices = append(gotDevices, deviceLine(d))
			}
			for _, a := range attempts {
				gotTried = append(gotTried, attemptLine(a))
			}
			if got, want := strings.Join(gotDevices, "\n"), strings.Join(tt.devices, "\n"); got != want {
				t.Errorf("Probe(%s) devices:\ngot\n%s\nwant\n%s", tt.machine, got, want)
			}
			if got, want := strings.Join(gotTried, "\n"), strings.Join(tt.tried, "\n"); got != want {
				t.Errorf("Probe(%s) attempts:\ngot\n%s\nwant\n%s", tt.machine, got, want)
			}
		})
	}
}

func TestProbeJAXTimeout(t *testing.T) {
	hang := func(ctx context.Context, name string, args ...string) ([]byte, error) {
		<-ctx.Done()
		return nil, ctx.Err()
	}
	_, attempts := fakes{}.drivers().probe(context.Background(), Env{Run: hang}, ProbeOptions{AskJAX: true, JAXTimeout: 10 * time.Millisecond})
	if got, want := attemptLine(attempts[0]), "jax command_failed: python3: JAX did not answer within 10ms"; got != want {
		t.Errorf("a Python that hangs got %q, want %q", got, want)
	}
}
