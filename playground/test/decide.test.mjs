// One decision of the page (decide.js), on a fake engine: what it shows
// for rules that do not load, an input that is not sent, an input the
// engine refuses, and a rule that fails.

import assert from "node:assert/strict";
import { test } from "node:test";

import { decide, decidingStep } from "../decide.js";
import { newState } from "../state.js";
import { fakeEngine, fakeWorkspace, result } from "./fakes.mjs";

const explanation = { decision: { rule: "gpu", device_type: "kDLCUDA", device_id: 0 }, trace: { rules: [{ rule: "cpu", matched: false }, { rule: "gpu", matched: true }], values: [] } };
const inputs = [{ name: "platform", type: "string", required: true }];

function page({ loaded = { handle: 1, errors: null }, answer, input = '{"platform":"gpu"}' } = {}) {
  const st = newState();
  st.ref = "jax@v3";
  st.ws = fakeWorkspace({}, loaded);
  st.engine = fakeEngine({ answers: { 1: answer ?? (() => result("ok", explanation)) }, inputs });
  st.inputText = input;
  let t = 0;
  return { st, now: () => (t += 5) };
}

test("a decision: the explanation, the input it was for, and how long each part took", async () => {
  const { st, now } = page();
  const out = await decide(st, now);
  assert.equal(out.handle, 1);
  assert.deepEqual(out.problems, []);
  assert.deepEqual(out.inputs, inputs);
  assert.equal(out.inputProblem, "");
  assert.equal(out.stale, "");
  assert.deepEqual(out.decided, { explanation, input: { platform: "gpu" }, ref: "jax@v3", ms: 5 });
  assert.deepEqual(out.ms, { rules: 5, explain: 5, worker: 2 }, "the engine's own time is the worker's count over the decision");
  assert.deepEqual(st.engine.calls, [[1, '{"platform":"gpu"}']]);
  assert.equal(decidingStep(out.decided.explanation).rule, "gpu");
});

test("rules that do not load: their errors, counted, and no call to explain", async () => {
  for (const [errors, want] of [[[{ code: "cel_syntax" }], "1 error,"], [[{ code: "cel_syntax" }, { code: "cel_type" }], "2 errors,"]]) {
    const { st, now } = page({ loaded: { handle: 0, errors } });
    const out = await decide(st, now);
    assert.deepEqual(out.problems, errors);
    assert.equal(out.inputs, null);
    assert.equal(out.decided, null);
    assert.ok(out.stale.startsWith(`The rules do not load (${want} marked in the editor)`), out.stale);
    assert.deepEqual(st.engine.calls, []);
  }
});

test("an input the page does not send: its problem, and the last decision stands", async () => {
  const { st, now } = page({ input: '{"platform":' });
  const out = await decide(st, now);
  assert.match(out.inputProblem, /^the input is not valid JSON/);
  assert.match(out.stale, /^The input has a problem/);
  assert.equal(out.decided, null);
  assert.deepEqual(st.engine.calls, []);
});

test("an input the engine refuses: its input_error, with the hint", async () => {
  const { st, now } = page({ answer: () => result("input_error", { code: "unknown_field", message: "input platfrom is not declared", hint: "did you mean platform?" }) });
  const out = await decide(st, now);
  assert.equal(out.inputProblem, "unknown_field: input platfrom is not declared (hint: did you mean platform?)");
  assert.match(out.stale, /^The input has a problem/);
  assert.deepEqual(out.problems, []);
  assert.equal(out.decided, null);
});

test("a rule that fails on this input: its eval_error is the problem", async () => {
  const e = { code: "eval_error", message: "no such key", position: { file: "rules/jax/v3/rules.yaml", line: 9, column: 11 } };
  const { st, now } = page({ answer: () => result("eval_error", e) });
  const out = await decide(st, now);
  assert.deepEqual(out.problems, [e]);
  assert.equal(out.stale, "The rules could not decide this input (eval_error). This is the last decision they made.");
  assert.equal(out.inputProblem, "");
});

test("decidingStep: the rule that matched, or the one that failed first", async () => {
  assert.equal(decidingStep({ trace: { rules: [{ rule: "a" }, { rule: "b", error: "x" }, { rule: "c", matched: true }] } }).rule, "b");
  assert.equal(decidingStep({ trace: { rules: [{ rule: "a" }] } }), undefined);
  assert.equal(decidingStep(undefined), undefined);
});
