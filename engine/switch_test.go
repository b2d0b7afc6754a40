package engine_test

import (
	"fmt"
	"strings"

	"github.com/dlroute/dlroute/engine"
)

// jaxSwitch is JAX's __dlpack_device__ (jax@1e1c6a8fc0) written by hand in
// Go, reading the same engine.Input the engine reads: the floor that
// BenchmarkResolve/rules is measured against. It checks the input no more
// than JAX does.
func jaxSwitch(in engine.Input) (engine.Decision, error) {
	platform, _ := in["platform"].(string)
	version, _ := in["platform_version"].(string)
	memoryKind, _ := in["memory_kind"].(string)
	shards := 1
	if s, ok := in["shards"].(int); ok {
		shards = s
	}
	id, hasID := in["local_hardware_id"].(int)
	raise := func(rule, msg string) (engine.Decision, error) {
		return engine.Decision{Error: &engine.Exception{Type: "BufferError", Message: msg}, Rule: rule, RuleSet: "jax@v3"}, nil
	}
	device := func(rule, name string, code int64, id int) (engine.Decision, error) {
		return engine.Decision{DeviceType: name, DeviceTypeCode: code, DeviceID: int64(id), Rule: rule, RuleSet: "jax@v3"}, nil
	}
	pinned := memoryKind == "pinned_host"
	switch {
	case shards != 1:
		return raise("sharded", "__dlpack__ only supported for unsharded arrays.")
	case platform == "cpu":
		return device("cpu", "kDLCPU", 1, 0)
	case platform == "gpu":
		name, code := "", int64(0)
		switch {
		case strings.Contains(version, "cuda") && pinned:
			name, code = "kDLCUDAHost", 3
		case strings.Contains(version, "cuda"):
			name, code = "kDLCUDA", 2
		case strings.Contains(version, "rocm") && pinned:
			name, code = "kDLROCMHost", 11
		case strings.Contains(version, "rocm"):
			name, code = "kDLROCM", 10
		case strings.Contains(version, "oneapi"):
			name, code = "kDLOneAPI", 14
		default:
			return raise("gpu-unknown-platform", "Unknown GPU platform for __dlpack__: "+version)
		}
		if !hasID {
			return raise("gpu-no-hardware-id", "Couldn't get local_hardware_id for __dlpack__")
		}
		return device("gpu", name, code, id)
	case platform == "tpu":
		if !pinned {
			return raise("tpu-not-pinned-host", "__dlpack__ device only supported for TPU pinned host memory")
		}
		if !hasID {
			return raise("tpu-no-hardware-id", "Couldn't get local_hardware_id for __dlpack__")
		}
		return device("tpu-pinned-host", "kDLTPUHost", 20, id)
	}
	if platform == "" {
		return engine.Decision{}, fmt.Errorf("no platform")
	}
	return raise("unsupported-platform", "__dlpack__ device only supported for CPU, GPU and TPU pinned host, got platform: "+platform)
}
