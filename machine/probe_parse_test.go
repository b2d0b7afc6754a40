package machine

import (
	"context"
	"encoding/json"
	"errors"
	"sync/atomic"
	"testing"
	"testing/fstest"
)

func TestParseNVRMVersion(t *testing.T) {
	tests := []struct {
		text, want string
	}{
		{"NVRM version: NVIDIA UNIX x86_64 Kernel Module  550.54.15  Tue Mar  5 22:23:56 UTC 2024\nGCC version:  gcc version 12.2.0 (Debian 12.2.0-14) \n", "550.54.15"},
		{"NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  555.58.02  Release Build  (dvs-builder@U16-I3-B03-4-3)  Tue Jun 25 01:26:03 UTC 2024\n", "555.58.02"},
		{"NVRM version: NVIDIA UNIX Open Kernel Module for aarch64  570.124.06  Release Build  (dvs-builder@U22-I3-AE18-23-3)  Wed Feb 26 01:37:46 UTC 2025\n", "570.124.06"},
		{"NVRM version: NVIDIA UNIX aarch64 Kernel Module  535.161.08  Tue Mar  5 22:31:30 UTC 2024\n", "535.161.08"},
		{"NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  610.43.02", "610.43.02"},
		{"", ""},
		{"GCC version: gcc 13\n", ""},
		{"NVRM version: NVIDIA UNIX x86_64 Kernel Module  unknown\n", ""},
	}
	for _, tt := range tests {
		got, ok := parseNVRMVersion(tt.text)
		if got != tt.want || ok != (tt.want != "") {
			t.Errorf("parseNVRMVersion(%q) got %q, %v, want %q", tt.text, got, ok, tt.want)
		}
	}
}

func TestParseROCmVersion(t *testing.T) {
	tests := []struct {
		text string
		want int
	}{
		{"6.2.0-66\n", 60200},
		{"6.1.2-119\n", 60102},
		{"5.7.1\n", 50701},
		{"6.4.43482-0f2d60242\n", 0}, // not major.minor.patch with patch < 100
		{"6.10.5\n", 61005},
		{"rocm\n", 0},
		{"", 0},
	}
	for _, tt := range tests {
		got, ok := parseROCmVersion(tt.text)
		if got != tt.want || ok != (tt.want != 0) {
			t.Errorf("parseROCmVersion(%q) got %d, %v, want %d", tt.text, got, ok, tt.want)
		}
	}
}

func TestGfxTarget(t *testing.T) {
	for v, want := range map[int64]string{
		90402:  "gfx942",
		90010:  "gfx90a",
		90012:  "gfx90c",
		110000: "gfx1100",
		120001: "gfx1201",
		0:      "AMD GPU",
	} {
		if got := gfxTarget(v); got != want {
			t.Errorf("gfxTarget(%d) got %q, want %q", v, got, want)
		}
	}
}

// HIP numbers GPUs by KFD node number, so node 10 comes after node 9, not after 1.
func TestAMDGPUsInNodeOrder(t *testing.T) {
	fsys := fstest.MapFS{}
	for node, gfx := range map[string]string{"0": "0", "1": "90010", "2": "90402", "10": "110000"} {
		simd := "simd_count 0\n"
		if gfx != "0" {
			simd = "simd_count 64\n"
		}
		fsys["sys/class/kfd/kfd/topology/nodes/"+node+"/properties"] = &fstest.MapFile{Data: []byte("cpu_cores_count 0\n" + simd + "gfx_target_version " + gfx + "\n")}
	}
	got, err := amdGPUs(Env{FS: fsys})
	want := []string{"gfx90a (KFD node 1)", "gfx942 (KFD node 2)", "gfx1100 (KFD node 10)"}
	if err != nil || len(got) != len(want) {
		t.Fatalf("amdGPUs got %q, %v, want %q", got, err, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("amdGPUs()[%d] got %q, want %q", i, got[i], want[i])
		}
	}
}

func TestAttemptJSON(t *testing.T) {
	tests := []struct {
		attempt Attempt
		want    string
	}{
		{Attempt{Probe: ProbeCPU}, `{"probe":"cpu"}`},
		{Attempt{Probe: ProbeCUDADriver, Err: cudaCallFailed("cuInit", 100)},
			`{"probe":"cuda-driver","error":"libcuda.so.1: cuInit returned 100 (CUDA_ERROR_NO_DEVICE)","code":"call_failed"}`},
		{Attempt{Probe: ProbeJAX, Err: errors.New("plain")}, `{"probe":"jax","error":"plain"}`},
	}
	for _, tt := range tests {
		got, err := json.Marshal(tt.attempt)
		if err != nil || string(got) != tt.want {
			t.Errorf("json.Marshal(%v) got %s, %v, want %s", tt.attempt, got, err, tt.want)
		}
	}
}

// A failed call carries its status as a *CallError, for programs.
func TestCallErrorIsReachable(t *testing.T) {
	_, attempts := fakes{cuda: &fakeCUDA{initStatus: 3}}.drivers().probe(context.Background(), Env{}, ProbeOptions{})
	var ce *CallError
	if !errors.As(attempts[0].Err, &ce) {
		t.Fatalf("attempt %v holds no *CallError", attempts[0])
	}
	want := CallError{Library: "libcuda.so.1", Call: "cuInit", Status: 3, Name: "CUDA_ERROR_NOT_INITIALIZED"}
	if *ce != want {
		t.Errorf("CallError got %+v, want %+v", *ce, want)
	}
	if got, _ := json.Marshal(ce); string(got) != `{"library":"libcuda.so.1","call":"cuInit","status":3,"status_name":"CUDA_ERROR_NOT_INITIALIZED"}` {
		t.Errorf("CallError JSON got %s", got)
	}
}

// NVML is shut down again after the probe: its init is counted.
func TestNVMLShutDownAfterProbe(t *testing.T) {
	n := &fakeNVML{version: 12020, count: 8}
	devices, _ := fakes{nvml: n}.drivers().probe(context.Background(), Env{}, ProbeOptions{})
	if len(devices) != 8 || devices[0].Detail != "CUDA 12.2 (the driver's CUDA version; JAX reports the CUDA runtime jaxlib was built against)" {
		t.Errorf("devices got %v", devices)
	}
	if n.shutdowns.Load() != 1 {
		t.Errorf("nvmlShutdown called %d times, want 1", n.shutdowns.Load())
	}
}

// A library that loads but lacks a function is reported before anything
// in it is called, and closed again.
func TestMissingSymbol(t *testing.T) {
	var closed atomic.Int32
	opened := 0
	env := Env{Open: func(lib string) (Library, error) {
		opened++
		return fakeLibrary{missing: "cuDeviceGetCount", closed: &closed}, nil
	}}
	_, err := bindCUDA(env, false)
	var pe *ProbeError
	if !errors.As(err, &pe) || pe.Code != CodeMissingSymbol {
		t.Fatalf("bindCUDA got %v, want a missing_symbol error", err)
	}
	want := "libcuda.so.1: no function cuDeviceGetCount (/usr/lib/x86_64-linux-gnu/libcuda.so.1: undefined symbol: cuDeviceGetCount)"
	if err.Error() != want {
		t.Errorf("error got %q, want %q", err, want)
	}
	if opened != 1 || closed.Load() != 1 {
		t.Errorf("opened %d, closed %d times, want 1 and 1", opened, closed.Load())
	}
	if _, err := NewCUDACopier(env); !errors.As(err, &pe) || pe.Code != CodeMissingSymbol {
		t.Errorf("NewCUDACopier got %v, want a missing_symbol error", err)
	}
}
