# jax@v3's decision (rules/jax/v3/) written by hand in Rego, for the
# side-by-side anchor of issue 37: OPA's compiled policy of the same
# decision as dlroute's decision module. The marker table, the inputs'
# defaults and the rules in rules.yaml's order, with the same messages
# and the same answer object (dlroute's decision JSON). It decides
# valid inputs only: the types of the input are not checked, as
# dlroute's plan checks them (input errors are dlroute's alone).
#
#	opa build -t wasm -e jax/decision bench/opa/jax.rego
package jax

# device_types.yaml: DLPack's device types, name -> code.
device_types := {
	"kDLCPU": 1, "kDLCUDA": 2, "kDLCUDAHost": 3, "kDLOpenCL": 4, "kDLVulkan": 7,
	"kDLMetal": 8, "kDLVPI": 9, "kDLROCM": 10, "kDLROCMHost": 11, "kDLExtDev": 12,
	"kDLCUDAManaged": 13, "kDLOneAPI": 14, "kDLWebGPU": 15, "kDLHexagon": 16,
	"kDLMAIA": 17, "kDLTrn": 18, "kDLTPU": 19, "kDLTPUHost": 20, "kDLAscend": 21,
}

# The gpu_markers table: case-sensitive substrings of platform_version,
# tested in this order.
gpu_markers := [
	{"marker": "cuda", "device": "kDLCUDA", "pinned_host": "kDLCUDAHost"},
	{"marker": "rocm", "device": "kDLROCM", "pinned_host": "kDLROCMHost"},
	{"marker": "oneapi", "device": "kDLOneAPI", "pinned_host": null},
]

platform := input.platform

platform_version := input.platform_version

# The inputs' defaults; a present null stays null, as in dlroute.
memory_kind := object.get(input, "memory_kind", "device")

local_hardware_id := object.get(input, "local_hardware_id", null)

shards := object.get(input, "shards", 1)

# The marker rows found in platform_version; the first one decides.
gpu_matches := [m | some m in gpu_markers; contains(platform_version, m.marker)]

gpu_device := gpu_matches[0].pinned_host if {
	memory_kind == "pinned_host"
	gpu_matches[0].pinned_host != null
} else := gpu_matches[0].device

device(type, id, rule) := {
	"device_type": type,
	"device_type_code": device_types[type],
	"device_id": id,
	"rule": rule,
	"ruleset": "jax@v3",
}

buffer_error(message, rule) := {
	"error": {"type": "BufferError", "message": message},
	"rule": rule,
	"ruleset": "jax@v3",
}

no_hardware_id := "Couldn't get local_hardware_id for __dlpack__"

# The rules, tried top to bottom: the first whose condition holds decides.
decision := buffer_error("__dlpack__ only supported for unsharded arrays.", "sharded") if {
	shards != 1
} else := device("kDLCPU", 0, "cpu") if {
	platform == "cpu"
} else := buffer_error(concat("", ["Unknown GPU platform for __dlpack__: ", platform_version]), "gpu-unknown-platform") if {
	platform == "gpu"
	count(gpu_matches) == 0
} else := buffer_error(no_hardware_id, "gpu-no-hardware-id") if {
	platform == "gpu"
	local_hardware_id == null
} else := device(gpu_device, local_hardware_id, "gpu") if {
	platform == "gpu"
} else := buffer_error("__dlpack__ device only supported for TPU pinned host memory", "tpu-not-pinned-host") if {
	platform == "tpu"
	memory_kind != "pinned_host"
} else := buffer_error(no_hardware_id, "tpu-no-hardware-id") if {
	platform == "tpu"
	local_hardware_id == null
} else := device("kDLTPUHost", local_hardware_id, "tpu-pinned-host") if {
	platform == "tpu"
} else := buffer_error(concat("", ["__dlpack__ device only supported for CPU, GPU and TPU pinned host, got platform: ", platform]), "unsupported-platform")
