// "What changed" (diff.js): the names of a diff's outcomes, and the test
// cases' inputs compared where the module's diff is not tried.

import assert from "node:assert/strict";
import { test } from "node:test";

import { outcome, answer, describe, caseInputs, changedInputs } from "../diff.js";
import { fakeEngine, result } from "./fakes.mjs";

test("outcome and answer name each side of a change", async () => {
  assert.equal(outcome({ rule: "gpu", device_type: "kDLCUDA" }), "gpu (kDLCUDA)");
  assert.equal(outcome({ rule: "gpu-unknown-platform", error_type: "BufferError" }), "gpu-unknown-platform (BufferError)");
  assert.equal(outcome({ failure: "eval_error" }), "no rule (eval_error)");
  assert.equal(answer({ device_type: "kDLCUDA", device_id: 0, rule: "gpu" }), "(kDLCUDA, 0) by gpu");
  assert.equal(answer({ eval_error: { code: "eval_error", message: "no such key" } }), "eval_error: eval_error: no such key");
  assert.equal(answer({ input_error: { code: "wrong_type", message: "bad" } }), "input_error: wrong_type: bad");
  assert.equal(describe(result("ok", { device_type: "kDLCPU", device_id: 0, rule: "cpu" })), "(kDLCPU, 0) by cpu");
  assert.equal(describe(result("eval_error", { code: "eval_error", message: "boom" })), "eval_error: eval_error boom");
});

test("caseInputs: each input once, named by its first case, the edited report's first", async () => {
  const edited = { cases: [{ name: "a", input: { platform: "cpu" } }, { name: "b", input: { platform: "gpu" } }] };
  const served = { cases: [{ name: "b-old", input: { platform: "gpu" } }, { name: "c", input: { platform: "tpu" } }] };
  assert.deepEqual([...caseInputs(edited, served)], [['{"platform":"cpu"}', "a"], ['{"platform":"gpu"}', "b"], ['{"platform":"tpu"}', "c"]]);
  assert.deepEqual([...caseInputs(null, served)].map(([, n]) => n), ["b-old", "c"], "the edited rules did not load");
});

test("changedInputs: the inputs whose answers differ, byte for byte", async () => {
  const cpu = result("ok", { device_type: "kDLCPU", device_id: 0, rule: "cpu" });
  const engine = fakeEngine({ answers: {
    1: () => cpu,
    2: (line) => (line.includes("gpu") ? result("ok", { device_type: "kDLCUDA", device_id: 0, rule: "gpu" }) : cpu),
  } });
  const inputs = new Map([['{"platform":"cpu"}', "a"], ['{"platform":"gpu"}', "b"]]);
  assert.deepEqual(await changedInputs(engine, 1, 2, inputs), [{ name: "b", line: '{"platform":"gpu"}', before: "(kDLCPU, 0) by cpu", after: "(kDLCUDA, 0) by gpu" }]);
  assert.deepEqual(await changedInputs(engine, 1, 1, inputs), []);
});
