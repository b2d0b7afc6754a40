package machine

import (
	"context"
	"io/fs"
	"time"
)

// Device is one device this machine has, as a probe read it.
type Device struct {
	// Index is the device's local hardware id: the ordinal its driver
	// gives it, which is what JAX reports as local_hardware_id.
	Index int `json:"index"`
	// Platform is what JAX's x.platform() would say: "gpu", "tpu" or
	// "cpu" (PJRT turns cuda, rocm and oneapi into "gpu").
	Platform string `json:"platform"`
	// PlatformVersion is the string PJRT would give as
	// client.platform_version, or the nearest the probe can read: see
	// each probe's constant, such as ProbeCUDADriver.
	PlatformVersion string `json:"platform_version"`
	// Probe names the probe that answered, one of the Probe* constants.
	Probe string `json:"probe"`
	// Detail says what was read, for people: "driver 550.54.15, CUDA 12.4".
	// Programs must not parse it.
	Detail string `json:"detail,omitempty"`
}

// Names of the probes, in the order Probe tries them, with what each
// gives as PlatformVersion.
const (
	// ProbeJAX runs Python and asks JAX itself (only with
	// ProbeOptions.AskJAX): the exact client.platform_version, such as
	// "cuda 12030" or "PJRT C API\ncuda 12030". Its answer is final.
	ProbeJAX = "jax"
	// ProbeCUDADriver calls cuDriverGetVersion in libcuda.so.1: "cuda
	// 12040". That is the CUDA version of the driver, which may be newer
	// than the CUDA runtime jaxlib was built against and reports.
	ProbeCUDADriver = "cuda-driver"
	// ProbeNVML calls nvmlSystemGetCudaDriverVersion in
	// libnvidia-ml.so.1: "cuda 12040", the same number as ProbeCUDADriver.
	ProbeNVML = "nvml"
	// ProbeProcNVIDIA reads /proc/driver/nvidia: only the kernel module's
	// version is there, so the CUDA version is unknown and it gives
	// CUDAVersionUnknown.
	ProbeProcNVIDIA = "proc-nvidia"
	// ProbeROCm reads the ROCm install's .info/version: "rocm 60200"
	// for ROCm 6.2.0, the TF_ROCM_VERSION number jaxlib is built with.
	ProbeROCm = "rocm"
	// ProbeAMDGPUSysfs finds AMD GPUs served by the amdgpu kernel module
	// where no ROCm install says its version: ROCmVersionUnknown.
	ProbeAMDGPUSysfs = "amdgpu-sysfs"
	// ProbeLevelZero counts Intel GPUs through libze_loader.so.1:
	// "oneapi 2026.0", the string PJRT's SYCL client hard-codes.
	ProbeLevelZero = "level-zero"
	// ProbeCPU answers when no GPU probe did: one device, "cpu".
	ProbeCPU = "cpu"
)

// PlatformVersion values for a vendor whose driver is there but whose
// version cannot be read. Each holds the vendor's marker, so rules see the
// right kind of GPU, and no number, so a parser such as
// re.search(r"cuda (\d+)", v) finds none rather than a wrong one.
const (
	CUDAVersionUnknown = "cuda unknown"
	ROCmVersionUnknown = "rocm unknown"
	// OneAPIVersion is what PJRT's SYCL client reports, whatever the
	// driver (openxla/xla se_gpu_pjrt_client.cc).
	OneAPIVersion = "oneapi 2026.0"
)

// Env is everything a probe reads from the machine, injected so tests give
// fixed inputs. A nil field reads as a machine that has nothing of that
// kind: no files, no shared libraries, no environment, no commands.
type Env struct {
	// FS is the file system from its root "/", such as os.DirFS("/") or
	// an fstest.MapFS; paths in it have no leading slash.
	FS fs.FS
	// Open loads a shared library by the name dlopen takes.
	Open func(lib string) (Library, error)
	// Getenv reads an environment variable (ROCM_PATH).
	Getenv func(string) string
	// Run runs a command and returns its standard output; only the
	// opt-in JAX probe uses it. Its error wraps exec.ErrNotFound when
	// the command does not exist.
	Run func(ctx context.Context, name string, args ...string) ([]byte, error)
}

// Library is a loaded shared library.
type Library interface {
	// Sym returns the address of a symbol, or an error if the library
	// has none of that name. It never returns 0 with a nil error.
	Sym(name string) (uintptr, error)
	// Close unloads the library. Probes never close a library whose
	// init function they called (a driver's threads may still run its
	// code), so this matters only for one that failed before.
	Close() error
}

// ProbeOptions configures Probe. The zero value is ready to use.
type ProbeOptions struct {
	// AskJAX runs Python to ask JAX for the exact platform_version. It
	// is off by default: importing JAX takes seconds and initialises
	// every backend it finds.
	AskJAX bool
	// Python is the interpreter AskJAX runs; empty means "python3".
	Python string
	// JAXTimeout bounds the Python run; 0 means DefaultJAXTimeout.
	JAXTimeout time.Duration
}

// Probe reads this machine's devices, best probe first, and reports each
// probe it tried, in order, with why it did not answer.
//
// With AskJAX, JAX answers first and, if it answers, alone. Otherwise the
// vendors are probed in turn, NVIDIA (cuda-driver, then nvml, then
// proc-nvidia), AMD (rocm, then amdgpu-sysfs) and Intel (level-zero): for
// each vendor the first probe that answers wins and the vendor's later
// probes are not tried. Every vendor that answers contributes its devices,
// NVIDIA's first, each vendor numbering its own from 0 as its driver does.
// When no GPU probe answers, the cpu probe gives one device, "cpu".
//
// Probe never panics on a broken driver: a library that loads but fails
// its init call, or lacks a function, is an Attempt with a *ProbeError
// naming the library, the call and its status, and the next probe is
// tried. If ctx ends, the probes not yet tried are reported with
// engine.CodeCanceled and no cpu device is made up: devices is empty only
// then. Probe calls into driver libraries on the calling goroutine and is
// safe to call from several goroutines at once.
func Probe(ctx context.Context, env Env, opts ProbeOptions) ([]Device, []Attempt) {
	return systemDrivers.probe(ctx, env, opts)
}
