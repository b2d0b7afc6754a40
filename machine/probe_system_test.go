package machine

import (
	"context"
	"errors"
	"os"
	"runtime"
	"strings"
	"testing"
)

// gpuEvidence lists what on this machine suggests a GPU driver; where
// there is none, Probe must answer with the cpu alone.
func gpuEvidence() []string {
	var found []string
	for _, p := range []string{"/dev/nvidiactl", "/proc/driver/nvidia/version", "/dev/kfd", "/sys/module/amdgpu", "/dev/dri"} {
		if _, err := os.Stat(p); err == nil {
			found = append(found, p)
		}
	}
	return found
}

// TestProbeSystemEnv probes the machine the test runs on, for real. On a
// machine without GPU drivers (CI, this project's build machines) it must
// give exactly the cpu, and each GPU probe must say why it did not answer.
// On a machine with one, it checks that what answered is well formed.
func TestProbeSystemEnv(t *testing.T) {
	devices, attempts := Probe(context.Background(), SystemEnv(), ProbeOptions{})
	for _, a := range attempts {
		t.Log(attemptLine(a))
	}
	for _, d := range devices {
		t.Log(deviceLine(d))
	}
	if len(devices) == 0 {
		t.Fatal("Probe(SystemEnv()) gave no device")
	}
	for _, a := range attempts {
		var pe *ProbeError
		if a.Err != nil && (!errors.As(a.Err, &pe) || pe.Code == "" || pe.Source == "" || pe.Message == "") {
			t.Errorf("attempt %v: want a *ProbeError with a code, a source and a message", a)
		}
	}
	if evidence := gpuEvidence(); len(evidence) > 0 {
		t.Logf("this machine has %s: checking only that the answer is well formed", strings.Join(evidence, ", "))
		for _, d := range devices {
			if d.Platform == "" || d.PlatformVersion == "" || d.Probe == "" {
				t.Errorf("device %+v is not well formed", d)
			}
		}
		return
	}
	if len(devices) != 1 || devices[0] != (Device{Platform: "cpu", PlatformVersion: "cpu", Probe: ProbeCPU, Detail: "no GPU probe answered"}) {
		t.Errorf("Probe(SystemEnv()) devices got %+v, want the cpu alone", devices)
	}
	var tried []string
	for _, a := range attempts {
		tried = append(tried, a.Probe)
		if a.Probe == ProbeCPU {
			if a.Err != nil {
				t.Errorf("cpu attempt got %v, want ok", a.Err)
			}
			continue
		}
		var pe *ProbeError
		if !errors.As(a.Err, &pe) {
			t.Errorf("attempt %s answered on a machine without GPU drivers", a.Probe)
			continue
		}
		switch pe.Code {
		case CodeLoadFailed, CodeNotInstalled, CodeNoDevices:
		default:
			t.Errorf("attempt %v: code %s, want load_failed, not_installed or no_devices", a, pe.Code)
		}
	}
	want := "cuda-driver nvml proc-nvidia rocm amdgpu-sysfs level-zero cpu"
	if got := strings.Join(tried, " "); got != want {
		t.Errorf("probes tried got %q, want %q", got, want)
	}
}

// openLibc loads the C library through SystemEnv, or skips where it has
// another name (musl, macOS) or none can be loaded.
func openLibc(t *testing.T) Library {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skip("the C library is libc.so.6 only on Linux with glibc")
	}
	lib, err := SystemEnv().Open("libc.so.6")
	if err != nil {
		t.Skipf("no glibc: %v", err)
	}
	return lib
}

func TestSharedLibrary(t *testing.T) {
	libc := openLibc(t)
	if addr, err := libc.Sym("getpid"); err != nil || addr == 0 {
		t.Errorf("Sym(getpid) got %#x, %v, want an address", addr, err)
	}
	if _, err := libc.Sym("cuInit"); err == nil || !strings.Contains(err.Error(), "cuInit") {
		t.Errorf("Sym(cuInit) in libc got %v, want an error naming it", err)
	}
	_, err := SystemEnv().Open("libdlroute-no-such-library.so.1")
	if err == nil || !strings.Contains(err.Error(), "libdlroute-no-such-library.so.1") {
		t.Errorf("Open of a missing library got %v, want an error naming it", err)
	}
}

// TestCUDABindingCallsC runs the purego binding for real without a GPU:
// every CUDA symbol resolves to libc's getpid, which ignores its arguments
// and returns the process id, so cuInit "fails" with status getpid(). This
// checks the binding's calling convention and the status's way back into
// a *CallError, the path a half-installed driver takes.
func TestCUDABindingCallsC(t *testing.T) {
	libc := openLibc(t)
	getpid, err := libc.Sym("getpid")
	if err != nil {
		t.Fatal(err)
	}
	env := Env{Open: func(string) (Library, error) { return symbolsAt{getpid}, nil }}
	_, attempts := systemDrivers.probe(context.Background(), env, ProbeOptions{})
	var ce *CallError
	if !errors.As(attempts[0].Err, &ce) || ce.Call != "cuInit" || ce.Status != int64(os.Getpid()) {
		t.Errorf("cuInit through getpid got %v, want a CallError with status %d", attempts[0], os.Getpid())
	}
	if !errors.As(attempts[1].Err, &ce) || ce.Call != "nvmlInit_v2" || ce.Status != int64(os.Getpid()) {
		t.Errorf("nvmlInit_v2 through getpid got %v, want a CallError with status %d", attempts[1], os.Getpid())
	}
	if !errors.As(attempts[5].Err, &ce) || ce.Call != "zeInit" || ce.Status != int64(os.Getpid()) {
		t.Errorf("zeInit through getpid got %v, want a CallError with status %d", attempts[5], os.Getpid())
	}
}

// TestNVMLBindingPassesBuffers binds nvmlSystemGetDriverVersion(char *buf,
// unsigned len) to libc's gethostname(char *buf, size_t len), which has
// the same shape: the host name must come back in the Go buffer.
func TestNVMLBindingPassesBuffers(t *testing.T) {
	libc := openLibc(t)
	want, err := os.Hostname()
	if err != nil {
		t.Skip(err)
	}
	env := Env{Open: func(string) (Library, error) {
		return symbolsRenamed{libc, map[string]string{"nvmlSystemGetDriverVersion": "gethostname"}}, nil
	}}
	api, err := bindNVML(env)
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 256)
	if st := api.SystemGetDriverVersion(buf); st != 0 {
		t.Fatalf("gethostname through the binding returned %d", st)
	}
	if got, _, _ := strings.Cut(string(buf), "\x00"); got != want {
		t.Errorf("gethostname through the binding got %q, want %q", got, want)
	}
}

// symbolsRenamed is a library whose symbols are another's, some renamed;
// the rest resolve to getpid, never called here.
type symbolsRenamed struct {
	lib     Library
	renamed map[string]string
}

func (s symbolsRenamed) Sym(name string) (uintptr, error) {
	if real, ok := s.renamed[name]; ok {
		return s.lib.Sym(real)
	}
	return s.lib.Sym("getpid")
}
func (s symbolsRenamed) Close() error { return nil }

// symbolsAt is a library whose every symbol is at one real address.
type symbolsAt struct{ addr uintptr }

func (s symbolsAt) Sym(string) (uintptr, error) { return s.addr, nil }
func (s symbolsAt) Close() error                { return nil }
