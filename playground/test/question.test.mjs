// The question on the first screen (question.js) and the trace's markers
// tried (views.js markersTried): what they say, in words, of interop.json
// and of a trace.

import assert from "node:assert/strict";
import { test } from "node:test";

import { answerText, arrayLabel, callText, cellFor, defaultPick } from "../question.js";
import { markersTried } from "../views.js";

const raise = { outcome: "error", short: "BufferError: Unknown GPU plat…k__: <unknown>", error: { type: "BufferError", message: "Unknown GPU platform for __dlpack__: <unknown>" }, steps: [] };
const doc = {
  consumers: ["numpy@v2", "torch@v3"],
  rows: [
    { producer: "numpy@v2", platform: "(kDLCPU, 0)", memory: "host", cells: [{ outcome: "in_place" }, { outcome: "in_place", device: { device_type: "kDLCPU", device_type_code: 1, device_id: 0 } }] },
    { producer: "jax@v3", platform: "gpu <unknown>", memory: "device", cells: [raise, raise] },
  ],
  copies: [{ copy: true, call: "from_dlpack(x, copy=True)", cells: [[{ outcome: "consumer_copy" }, { outcome: "producer_copy" }], [raise, raise]] }],
};

test("answerText: in place, a copy and who makes it, or the exception, whole", () => {
  assert.equal(answerText(doc.rows[0].cells[1], "numpy@v2", "torch@v3"), "In place: torch's array shares numpy's memory on (kDLCPU, 0); nothing is copied.");
  assert.equal(answerText({ outcome: "producer_copy" }, "numpy@v2", "torch@v3", true), "A copy, made by numpy: its __dlpack__ copies the array, and torch takes the copy.");
  assert.equal(answerText({ outcome: "consumer_copy" }, "jax@v3", "torch@v3"), "A copy, made by torch: its from_dlpack copies what jax exports.");
  assert.equal(answerText(raise, "jax@v3", "torch@v3", false), "torch.from_dlpack(x, copy=False) raises BufferError: Unknown GPU platform for __dlpack__: <unknown>",
    "the whole message, not the grid's short one");
  const silent = { outcome: "error", error: { type: "SilentlyDifferent", message: "numpy reads every value with its sign flipped" } };
  assert.equal(answerText(silent, "torch@v3", "numpy@v2"), "Silently different: numpy.from_dlpack(x) raises nothing, and numpy reads other values than torch's: numpy reads every value with its sign flipped",
    "a silent difference is no exception");
  assert.equal(callText("cupy@v1"), "cupy.from_dlpack(x)");
  assert.equal(callText("jax@v3", true), "jax.dlpack.from_dlpack(x, copy=True)", "JAX's own name for it");
});

test("the seed's question is a JAX GPU array of an unknown platform into torch", () => {
  assert.deepEqual(defaultPick(doc), { producer: "jax@v3", row: 1, col: 1, copy: undefined });
  assert.equal(cellFor(doc, 0, 1, undefined).outcome, "in_place");
  assert.equal(cellFor(doc, 0, 1, true).outcome, "producer_copy");
  assert.equal(cellFor(doc, 0, 1, false), null, "no copy=False matrix in this document");
  assert.equal(arrayLabel({ platform: 'METAL "PJRT C API\\nmetal 1.0"', memory: "device" }), 'METAL "PJRT C API ⏎ metal 1.0", device memory');
});

test("markersTried: the markers of the table an empty match filtered, and the row to add them after", () => {
  const rules = [
    "tables:", "  gpu_markers:", "    columns:", "      marker: string", "    rows:",
    "      - {marker: cuda,   device: kDLCUDA}", "      - {marker: rocm, device: kDLROCM}", "",
    "values:", "  gpu_matches: gpu_markers.filter(m, platform_version.contains(m.marker))",
  ].join("\n");
  const trace = { rules: [], values: [{ name: "gpu_matches", value: [], used: true, position: { file: "rules/jax/v3/rules.yaml", line: 10, column: 3 } }] };
  const got = markersTried(trace, { platform_version: "<unknown>" }, (p) => (p === "jax/v3/rules.yaml" ? rules : undefined));
  assert.deepEqual(got, { value: "gpu_matches", table: "gpu_markers", markers: ["cuda", "rocm"], path: "jax/v3/rules.yaml", lastLine: 7, lastText: "      - {marker: rocm, device: kDLROCM}", version: "<unknown>" });
  const matched = { ...trace, values: [{ ...trace.values[0], value: [{ marker: "cuda" }] }] };
  assert.equal(markersTried(matched, {}, () => rules), null, "a marker matched: nothing to fix");
});

test("a workspace's twin: the same files and edits, its own handles", async () => {
  const { Workspace } = await import("../workspace.js");
  const ws = new Workspace({ "jax/v3/rules.yaml": "rules: []\n" });
  const twin = ws.twin({ name: "second engine", loadLazy: async () => ({ ok: true }), load: async () => ({ ok: true }), ruleset: async () => ({ handle: 7 }), release() {} });
  ws.edits = new Map([["jax/v3/rules.yaml", "rules: [x]\n"]]);
  assert.equal(twin.textOf("jax/v3/rules.yaml"), "rules: [x]\n", "the twin reads the edits as they are replaced");
  assert.deepEqual(twin.refs, ["jax@v3"]);
  assert.equal(twin.engine.name, "second engine");
  assert.notEqual(twin.served, ws.served, "handles of its own");
  assert.equal((await twin.current("jax@v3")).handle, 7, "a real Workspace: its private methods run on it");
  assert.equal(ws.edited.handle, 0, "the first's handles are untouched");
});
