package machine

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
)

// Where the NVIDIA kernel module describes itself and each GPU it serves
// (open-gpu-kernel-modules, kernel-open/nvidia/nv-procfs.c).
const (
	procNVIDIAVersion = "/proc/driver/nvidia/version"
	procNVIDIAGPUs    = "/proc/driver/nvidia/gpus"
)

// nvrmVersion finds the module's version in the first line of
// /proc/driver/nvidia/version, in both the proprietary form
// ("NVIDIA UNIX x86_64 Kernel Module  550.54.15  Tue Mar  5 ...") and the
// open one ("NVIDIA UNIX Open Kernel Module for x86_64  555.58.02  Release Build ...").
var nvrmVersion = regexp.MustCompile(`^NVRM version: .*?Kernel Module(?: for \S+)?\s+(\d+(?:\.\d+)+)(?:\s|$)`)

// parseNVRMVersion returns the kernel module's version, or false.
func parseNVRMVersion(text string) (string, bool) {
	m := nvrmVersion.FindStringSubmatch(text)
	if m == nil {
		return "", false
	}
	return m[1], true
}

// driverVersionFromProc is the kernel module's version where /proc says
// it, else "": only for a Detail.
func driverVersionFromProc(env Env) string {
	text, err := readMachineFile(env, procNVIDIAVersion)
	if err != nil {
		return ""
	}
	v, _ := parseNVRMVersion(text)
	return v
}

// probeProcNVIDIA reads what the NVIDIA kernel module publishes: its
// version and one directory per GPU, named by PCI address. The CUDA
// version is not there, so the devices' PlatformVersion is
// CUDAVersionUnknown. GPUs the module excludes ("GPU Excluded: Yes") are
// left out, as CUDA leaves them out; the rest are numbered in PCI order,
// which is CUDA's order for GPUs of one model or under
// CUDA_DEVICE_ORDER=PCI_BUS_ID.
func probeProcNVIDIA(_ context.Context, env Env, _ ProbeOptions) ([]Device, error) {
	text, err := readMachineFile(env, procNVIDIAVersion)
	if err != nil {
		return nil, err
	}
	module, ok := parseNVRMVersion(text)
	if !ok {
		return nil, &ProbeError{Code: CodeBadOutput, Source: procNVIDIAVersion, Message: fmt.Sprintf("no kernel module version in %q", firstLineOf(text))}
	}
	entries, err := readMachineDir(env, procNVIDIAGPUs)
	if err != nil {
		var pe *ProbeError
		if errors.As(err, &pe) && pe.Code == CodeNotInstalled {
			pe.Code, pe.Message = CodeNoDevices, "not found: the kernel module "+module+" serves no GPU"
		}
		return nil, err
	}
	var details []string
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		info, _ := readMachineFile(env, procNVIDIAGPUs+"/"+e.Name()+"/information")
		fields := procFields(info)
		if fields["GPU Excluded"] == "Yes" {
			continue
		}
		model := fields["Model"]
		if model == "" {
			model = "NVIDIA GPU"
		}
		details = append(details, fmt.Sprintf("%s at %s, kernel module %s; CUDA version unknown (read from /proc only)", model, e.Name(), module))
	}
	if len(details) == 0 {
		return nil, &ProbeError{Code: CodeNoDevices, Source: procNVIDIAGPUs, Message: "the kernel module " + module + " serves no GPU that is not excluded"}
	}
	return gpuDevices(len(details), ProbeProcNVIDIA, CUDAVersionUnknown, func(i int) string { return details[i] }), nil
}

// procFields reads "Key: \t value" lines into a map.
func procFields(text string) map[string]string {
	fields := map[string]string{}
	for _, line := range strings.Split(text, "\n") {
		k, v, ok := strings.Cut(line, ":")
		if ok {
			fields[strings.TrimSpace(k)] = strings.TrimSpace(v)
		}
	}
	return fields
}

// firstLineOf is text up to its first newline.
func firstLineOf(text string) string {
	line, _, _ := strings.Cut(text, "\n")
	return line
}
