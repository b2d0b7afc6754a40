package main

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/dlroute/dlroute/machine"
)

// fakeMachine replaces the probes for one test.
func fakeMachine(t *testing.T, devices []machine.Device, attempts []machine.Attempt) {
	old := probe
	probe = func(context.Context, machine.ProbeOptions) ([]machine.Device, []machine.Attempt) {
		return devices, attempts
	}
	t.Cleanup(func() { probe = old })
}

func TestDetectTable(t *testing.T) {
	fakeMachine(t, []machine.Device{
		{Index: 0, Platform: "gpu", PlatformVersion: "cuda 12040", Probe: machine.ProbeCUDADriver},
		{Index: 1, Platform: "gpu", PlatformVersion: "nvfork 1.0", Probe: machine.ProbeCUDADriver},
	}, []machine.Attempt{{Probe: machine.ProbeCUDADriver}})
	stdout, stderr, status := runDlroute(t, "detect")
	want := []string{
		"DEVICE  PLATFORM  PLATFORM_VERSION  PROBE        JAX@V3 DECIDES",
		`0       gpu       "cuda 12040"      cuda-driver  kDLCUDA, device 0 (rule gpu)`,
		`1       gpu       "nvfork 1.0"      cuda-driver  BufferError: Unknown GPU platform for __dlpack__: nvfork 1.0 (rule gpu-unknown-platform)`,
	}
	if status != 0 || stderr != "" || strings.TrimSpace(stdout) != strings.Join(want, "\n") {
		t.Errorf("dlroute detect: status %d, stderr %q, stdout:\n%s\nwant:\n%s", status, stderr, stdout, strings.Join(want, "\n"))
	}
}

func TestDetectWithoutGPU(t *testing.T) {
	fakeMachine(t, []machine.Device{{Index: 0, Platform: "cpu", PlatformVersion: "cpu", Probe: machine.ProbeCPU}},
		[]machine.Attempt{{Probe: machine.ProbeCUDADriver, Err: errors.New("libcuda.so.1: cannot open shared object file")}, {Probe: machine.ProbeCPU}})
	stdout, _, status := runDlroute(t, "detect")
	for _, want := range []string{"no GPU found on this machine:", "  cuda-driver: libcuda.so.1: cannot open shared object file", `0       cpu       "cpu"             cpu    kDLCPU, device 0 (rule cpu)`} {
		if status != 0 || !strings.Contains(stdout, want+"\n") {
			t.Errorf("dlroute detect on a CPU-only machine: status %d, stdout lacks %q:\n%s", status, want, stdout)
		}
	}
	stdout, _, status = runDlroute(t, "detect", "--json", "--ruleset", "jax@v1")
	var got struct {
		RuleSet string
		Devices []struct {
			Index    int
			Probe    string
			Decision struct {
				DeviceType string `json:"device_type"`
			}
		}
		Attempts []map[string]any
	}
	if err := json.Unmarshal([]byte(stdout), &got); err != nil || status != 0 {
		t.Fatalf("dlroute detect --json: %v (status %d):\n%s", err, status, stdout)
	}
	if got.RuleSet != "jax@v1" || len(got.Devices) != 1 || got.Devices[0].Decision.DeviceType != "kDLCPU" || len(got.Attempts) != 2 {
		t.Errorf("dlroute detect --json = %+v, want jax@v1, one kDLCPU device, two attempts", got)
	}
}

func TestDetectAskJAXTakesTheInterpreter(t *testing.T) {
	for _, c := range []struct {
		args   []string
		ask    bool
		python string
	}{
		{nil, false, ""},
		{[]string{"--ask-jax"}, true, "python3"},
		{[]string{"--ask-jax=/opt/venv/bin/python"}, true, "/opt/venv/bin/python"},
		{[]string{"--ask-jax=false"}, false, ""},
	} {
		var got machine.ProbeOptions
		old := probe
		probe = func(_ context.Context, opts machine.ProbeOptions) ([]machine.Device, []machine.Attempt) {
			got = opts
			return []machine.Device{{Platform: "cpu", PlatformVersion: "cpu", Probe: machine.ProbeCUDADriver}}, nil
		}
		_, stderr, status := runDlroute(t, append([]string{"detect"}, c.args...)...)
		probe = old
		if status != 0 || got.AskJAX != c.ask || got.Python != c.python {
			t.Errorf("dlroute detect %v: status %d (%s), ProbeOptions %+v, want AskJAX %v Python %q",
				c.args, status, stderr, got, c.ask, c.python)
		}
	}
}
