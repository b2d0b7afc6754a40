// Examples to start from: an input for a rule set, and for some an edit of
// its rules. An edit is a text to find in the original file and what goes
// after it, so an example still applies to a rules directory given with
// --rules as long as it has the line.

const tpuVersion = "PJRT C API\nTFRT TPU v2\nBuilt on Oct 30 2023 03:04:42 (1698660263) cl/577737722";

export const examples = [
  {
    id: "seed",
    title: "An unknown GPU platform",
    note: "A jaxlib built without CUDA reports <unknown>: JAX raises BufferError.",
    ref: "jax@v3",
    input: { platform: "gpu", platform_version: "<unknown>", local_hardware_id: 0 },
  },
  {
    id: "seed-exchange",
    title: "An unknown GPU platform, copied to the host by the exchange",
    note: "exchange@v2 falls back to a copy through host memory, with IS_COPIED set.",
    ref: "exchange@v2",
    input: { platform: "gpu", platform_version: "<unknown>", local_hardware_id: 0, max_version: [1, 1] },
  },
  {
    id: "rocm-pinned",
    title: "A ROCm pinned buffer",
    note: "Pinned host memory on ROCm is kDLROCMHost, with the hardware id as its device id.",
    ref: "jax@v3",
    input: { platform: "gpu", platform_version: "rocm 60200", memory_kind: "pinned_host", local_hardware_id: 1 },
  },
  {
    id: "pjrt-c-api",
    title: "A PJRT C API plugin's multi-line string",
    note: "Plugins prefix their own string with a line; the marker is found by substring.",
    ref: "jax@v3",
    input: { platform: "gpu", platform_version: "PJRT C API\ncuda 12030", local_hardware_id: 0 },
  },
  {
    id: "tpu-device",
    title: "A TPU device buffer",
    note: "Only TPU pinned host memory has a DLPack device: device memory is a BufferError.",
    ref: "jax@v3",
    input: { platform: "tpu", platform_version: tpuVersion, memory_kind: "device", local_hardware_id: 0 },
  },
  {
    id: "jax-export",
    title: "JAX's own export of an unknown platform's array",
    note: "JAX's __dlpack__ reads the client's platform, not platform_version: it exports in place; the unknown platform's error comes from __dlpack_device__, which a consumer asks first.",
    ref: "jax-export@v1",
    input: { client_platform: "cuda", local_hardware_id: 0 },
  },
  {
    id: "torch-pinned-capsule",
    title: "torch 1.13 importing a pinned host capsule",
    note: "torch.from_dlpack refuses kDLCUDAHost (3): what a JAX pinned_host array meets there.",
    ref: "torch@v1",
    input: { call: "from_dlpack", capsule_device: [3, 0] },
  },
  {
    id: "new-marker",
    title: "Adding a new marker",
    note: "One row in gpu_markers teaches the rules a new GPU platform.",
    ref: "jax@v3",
    input: { platform: "gpu", platform_version: "nvfork 1.0", local_hardware_id: 0 },
    edit: {
      file: "jax/v3/rules.yaml",
      after: "      - {marker: oneapi, device: kDLOneAPI}\n",
      insert: "      - {marker: nvfork, device: kDLCUDA, pinned_host: kDLCUDAHost}\n",
    },
  },
];

// applyTo is what picking example ex does to the rules, whose files read
// textOf(path): {edits, note}. Its edits replace any before it, so the
// example's one edit, or none; the edit is not made when the line it
// goes after is not there, and the note says so.
export function applyTo(ex, textOf) {
  const edits = new Map();
  if (!ex.edit) return { edits, note: ex.note };
  const { file, after, insert } = ex.edit;
  const text = textOf(file) ?? "";
  if (text.includes(insert)) return { edits, note: ex.note };
  const at = text.indexOf(after);
  if (at < 0) return { edits, note: `${ex.note} (The line it adds after is not in ${file}, so the edit was not made.)` };
  const end = at + after.length;
  edits.set(file, text.slice(0, end) + insert + text.slice(end));
  return { edits, note: ex.note };
}

// insertedLine is the line (from 1) where ex's edit reads in text, or 0.
export function insertedLine(ex, text) {
  const first = ex.edit.insert.split("\n")[0];
  return text.split("\n").indexOf(first) + 1;
}
