// What the views compute from the module's JSON (views.js): positions,
// verdicts, the marker in platform_version, the marks of a rule file.

import assert from "node:assert/strict";
import { test } from "node:test";

import { rulesPath, where, verdict, findMarker, ruleMarks } from "../views.js";

const pos = (line, column, file = "rules/jax/v3/rules.yaml") => ({ file, line, column });

test("positions", () => {
  assert.equal(rulesPath("rules/jax/v3/rules.yaml"), "jax/v3/rules.yaml");
  assert.equal(rulesPath("/tmp/my rules/jax/v3/rules.yaml"), "jax/v3/rules.yaml");
  assert.equal(where(pos(12, 9)), "rules.yaml:12:9");
});

test("verdict", () => {
  assert.equal(verdict({ device_type: "kDLCUDA", device_id: 0 }), "(kDLCUDA, 0)");
  assert.equal(verdict({ error: { type: "BufferError", message: "Unknown GPU platform" } }), "BufferError: Unknown GPU platform");
  assert.equal(verdict(null), "");
});

const matches = { name: "gpu_matches", value: [{ marker: "cuda", device: "kDLCUDA" }], used: true, position: pos(12, 1) };

test("findMarker: the first row of the matching list, and where it starts in platform_version", () => {
  const trace = { rules: [], values: [{ name: "other", value: [1, 2] }, matches] };
  assert.deepEqual(findMarker(trace, { platform_version: "PJRT C API\ncuda 12030" }), { value: "gpu_matches", marker: "cuda", version: "PJRT C API\ncuda 12030", at: 11 });
  // In an import's trace, as the exchange reads jax's.
  const outer = { rules: [], values: [{ name: "jax", value: {}, import: { decision: {}, trace } }] };
  assert.equal(findMarker(outer, { platform_version: "cuda" }).at, 0);
  assert.equal(findMarker({ rules: [], values: [{ name: "gpu_matches", value: [] }] }, {}), null, "no row matched");
  assert.equal(findMarker(trace, { platform_version: 7 }).version, "", "not a string");
});

const file = `rules:
  - id: cpu
    when: platform == 'cpu'
    device: {type: kDLCPU, id: 0}

  - id: gpu
    when: platform == 'gpu'

    device: {type: gpu_device, id: 0}

  - id: last
gpu_markers:
  rows:
    # - {marker: cuda, device: old}
    - {marker: 'cuda', device: kDLCUDA}
    - {note: ü, marker: "é-cuda", device: kDLCUDA}
`;

test("ruleMarks: the deciding rule's whole block, the rules tried, the values read, the marker row", () => {
  const explanation = { trace: {
    rules: [{ rule: "cpu", position: pos(2, 5) }, { rule: "gpu", matched: true, position: pos(6, 5) }, { rule: "elsewhere", position: pos(2, 5, "rules/jax/v2/rules.yaml") }],
    values: [{ name: "gpu_device", used: true, position: pos(3, 5) }, { name: "unread", used: false, position: pos(12, 3) }, matches],
  } };
  const { lines, spans } = ruleMarks("jax/v3/rules.yaml", file, explanation, { platform_version: "cuda 12030" });
  assert.deepEqual(Object.fromEntries(lines), { 2: "tried", 3: "value", 6: "hit", 7: "hit", 8: "hit", 9: "hit", 12: "value", 15: "marker" });
  assert.deepEqual(spans, [{ line: 15, column: 17, length: 4, cls: "marker" }]);
});

test("ruleMarks: a marker's column counts bytes, as the engine's positions do", () => {
  const explanation = { trace: { rules: [], values: [{ name: "gpu_matches", value: [{ marker: "é-cuda" }] }] } };
  const { spans } = ruleMarks("jax/v3/rules.yaml", file, explanation, { platform_version: "é-cuda 1" });
  assert.deepEqual(spans, [{ line: 16, column: 27, length: 7, cls: "marker" }]);
});

test("ruleMarks: a rule that failed marks its block as failed; no explanation, no marks", () => {
  const explanation = { trace: { rules: [{ rule: "last", error: "boom", position: pos(11, 5) }], values: [] } };
  assert.deepEqual(Object.fromEntries(ruleMarks("jax/v3/rules.yaml", file, explanation, {}).lines), { 11: "fail" });
  assert.deepEqual(ruleMarks("jax/v3/rules.yaml", file, undefined, {}), { lines: new Map(), spans: [] });
});
