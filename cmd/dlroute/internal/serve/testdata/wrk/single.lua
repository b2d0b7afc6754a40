-- wrk -s single.lua: one input per request, cycling through one per row
-- of JAX's table (as BenchmarkServe's benchInputs).
local inputs = {
  '{"platform":"gpu","platform_version":"cuda 12030","local_hardware_id":0,"shards":2}',
  '{"platform":"cpu","platform_version":"cpu","local_hardware_id":0}',
  '{"platform":"gpu","platform_version":"cuda 12030","memory_kind":"pinned_host","local_hardware_id":1}',
  '{"platform":"gpu","platform_version":"PJRT C API\\ncuda 12030","local_hardware_id":0}',
  '{"platform":"gpu","platform_version":"rocm 60200","memory_kind":"pinned_host","local_hardware_id":1}',
  '{"platform":"gpu","platform_version":"rocm 60200","local_hardware_id":2}',
  '{"platform":"gpu","platform_version":"oneapi 2026.0","local_hardware_id":0}',
  '{"platform":"gpu","platform_version":"<unknown>","local_hardware_id":0}',
  '{"platform":"gpu","platform_version":"cuda 12030","local_hardware_id":null}',
  '{"platform":"tpu","platform_version":"PJRT C API\\nTFRT TPU v2","memory_kind":"pinned_host","local_hardware_id":3}',
  '{"platform":"tpu","platform_version":"PJRT C API\\nTFRT TPU v2","memory_kind":"device","local_hardware_id":3}',
  '{"platform":"METAL","platform_version":"metal","local_hardware_id":0}',
}
local i = 0
request = function()
  i = i + 1
  return wrk.format("POST", "/v1/resolve", {["Content-Type"] = "application/json"}, inputs[(i % #inputs) + 1])
end
