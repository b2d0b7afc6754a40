package machine

import (
	"context"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// Where AMD's stack describes itself. ROCM_PATH, which ROCm's own tools
// honour, moves the install from defaultROCmPath.
const (
	defaultROCmPath = "/opt/rocm"
	rocmVersionFile = "/.info/version" // under the install: "6.2.0-66"
	amdgpuModule    = "/sys/module/amdgpu"
	kfdNodes        = "/sys/class/kfd/kfd/topology/nodes"
	driRenderNodes  = "/dev/dri"
	drmClass        = "/sys/class/drm"
	amdPCIVendor    = "0x1002"
)

var rocmVersion = regexp.MustCompile(`^(\d+)\.(\d+)\.(\d+)`)

// parseROCmVersion turns "6.2.0-66" into 60200, TF_ROCM_VERSION as
// ROCm/xla's rocm_config.h computes it: major*10000 + minor*100 + patch.
func parseROCmVersion(text string) (int, bool) {
	m := rocmVersion.FindStringSubmatch(strings.TrimSpace(text))
	if m == nil {
		return 0, false
	}
	major, _ := strconv.Atoi(m[1])
	minor, _ := strconv.Atoi(m[2])
	patch, _ := strconv.Atoi(m[3])
	if minor > 99 || patch > 99 {
		return 0, false
	}
	return major*10000 + minor*100 + patch, true
}

// probeROCm reads the ROCm install's version and counts AMD GPUs
// (amdGPUs): "rocm 60200" for ROCm 6.2.0.
func probeROCm(_ context.Context, env Env, _ ProbeOptions) ([]Device, error) {
	root := defaultROCmPath
	if env.Getenv != nil && env.Getenv("ROCM_PATH") != "" {
		root = strings.TrimRight(env.Getenv("ROCM_PATH"), "/")
	}
	path := root + rocmVersionFile
	text, err := readMachineFile(env, path)
	if err != nil {
		return nil, err
	}
	version, ok := parseROCmVersion(text)
	if !ok {
		return nil, &ProbeError{Code: CodeBadOutput, Source: path, Message: fmt.Sprintf("not a ROCm version: %q", firstLineOf(text))}
	}
	gpus, err := amdGPUs(env)
	if err != nil {
		return nil, err
	}
	detail := "ROCm " + strings.TrimSpace(text)
	if v := amdgpuModuleVersion(env); v != "" {
		detail += ", amdgpu " + v
	}
	return gpuDevices(len(gpus), ProbeROCm, fmt.Sprintf("rocm %d", version), func(i int) string { return detail + ", " + gpus[i] }), nil
}

// probeAMDGPUSysfs finds AMD GPUs where the amdgpu module is loaded but
// no ROCm install says its version: the kernel module's version does not
// tell which ROCm a jaxlib would be built against, so the devices'
// PlatformVersion is ROCmVersionUnknown.
func probeAMDGPUSysfs(_ context.Context, env Env, _ ProbeOptions) ([]Device, error) {
	if !machineHas(env, amdgpuModule) {
		return nil, &ProbeError{Code: CodeNotInstalled, Source: amdgpuModule, Message: "the amdgpu kernel module is not loaded"}
	}
	gpus, err := amdGPUs(env)
	if err != nil {
		return nil, err
	}
	detail := "amdgpu (in-tree)"
	if v := amdgpuModuleVersion(env); v != "" {
		detail = "amdgpu " + v
	}
	detail += ", no ROCm install: ROCm version unknown"
	return gpuDevices(len(gpus), ProbeAMDGPUSysfs, ROCmVersionUnknown, func(i int) string { return detail + ", " + gpus[i] }), nil
}

// amdgpuModuleVersion is /sys/module/amdgpu/version, which only the
// amdgpu-dkms module has, or "".
func amdgpuModuleVersion(env Env) string {
	text, err := readMachineFile(env, amdgpuModule+"/version")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(text)
}

// amdGPUs describes each AMD GPU in HIP's order: the KFD topology's nodes
// with SIMDs (node 0 and other CPU-only nodes have none), by node number.
// Where the topology is not visible (some containers), it counts the DRM
// render nodes whose PCI vendor is AMD's: /dev/dri holds Intel's and
// NVIDIA's too.
func amdGPUs(env Env) ([]string, error) {
	nodes, err := readMachineDir(env, kfdNodes)
	if err != nil {
		return amdRenderNodes(env)
	}
	type node struct {
		n    int
		desc string
	}
	var gpus []node
	for _, e := range nodes {
		n, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		text, err := readMachineFile(env, kfdNodes+"/"+e.Name()+"/properties")
		if err != nil {
			continue
		}
		props := kfdProperties(text)
		if props["simd_count"] <= 0 {
			continue
		}
		gpus = append(gpus, node{n, fmt.Sprintf("%s (KFD node %d)", gfxTarget(props["gfx_target_version"]), n)})
	}
	if len(gpus) == 0 {
		return nil, &ProbeError{Code: CodeNoDevices, Source: kfdNodes, Message: "no node has SIMDs: no AMD GPU"}
	}
	sort.Slice(gpus, func(i, j int) bool { return gpus[i].n < gpus[j].n })
	descs := make([]string, len(gpus))
	for i, g := range gpus {
		descs[i] = g.desc
	}
	return descs, nil
}

// amdRenderNodes describes the render nodes of /dev/dri whose device's
// PCI vendor is AMD's, by minor number.
func amdRenderNodes(env Env) ([]string, error) {
	entries, err := readMachineDir(env, driRenderNodes)
	if err != nil {
		return nil, &ProbeError{Code: CodeNoDevices, Source: kfdNodes, Message: "not found, nor " + driRenderNodes + ": no AMD GPU", err: err}
	}
	type render struct {
		minor int
		name  string
	}
	var found []render
	for _, e := range entries {
		minor, err := strconv.Atoi(strings.TrimPrefix(e.Name(), "renderD"))
		if err != nil || !strings.HasPrefix(e.Name(), "renderD") {
			continue
		}
		vendor, err := readMachineFile(env, drmClass+"/"+e.Name()+"/device/vendor")
		if err != nil || strings.TrimSpace(vendor) != amdPCIVendor {
			continue
		}
		found = append(found, render{minor, e.Name()})
	}
	if len(found) == 0 {
		return nil, &ProbeError{Code: CodeNoDevices, Source: driRenderNodes, Message: "no render node of an AMD GPU (PCI vendor " + amdPCIVendor + ")"}
	}
	sort.Slice(found, func(i, j int) bool { return found[i].minor < found[j].minor })
	descs := make([]string, len(found))
	for i, r := range found {
		descs[i] = driRenderNodes + "/" + r.name
	}
	return descs, nil
}

// kfdProperties reads a KFD node's "name value" lines.
func kfdProperties(text string) map[string]int64 {
	props := map[string]int64{}
	for _, line := range strings.Split(text, "\n") {
		k, v, ok := strings.Cut(strings.TrimSpace(line), " ")
		if !ok {
			continue
		}
		if n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64); err == nil {
			props[k] = n
		}
	}
	return props
}

// gfxTarget names a gfx_target_version: major*10000 + minor*100 +
// stepping, the last two written in hex, so 90402 is gfx942 and 90010
// gfx90a.
func gfxTarget(v int64) string {
	if v <= 0 {
		return "AMD GPU"
	}
	return fmt.Sprintf("gfx%d%x%x", v/10000, v/100%100, v%100)
}
