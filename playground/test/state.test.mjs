// The page's state (state.js): one sealed record, changed by its functions.

import assert from "node:assert/strict";
import { test } from "node:test";

import * as state from "../state.js";

test("the state is sealed: a field state.js does not declare cannot be added", () => {
  const st = state.newState();
  assert.throws(() => { st.undeclared = 1; }, TypeError);
  assert.throws(() => { delete st.ref; }, TypeError);
  st.ref = "jax@v3"; // a declared one can be written
  assert.equal(st.ref, "jax@v3");
});

test("every field starts empty", () => {
  const st = state.newState();
  for (const [k, v] of Object.entries(st)) {
    if (k === "timings") continue;
    assert.ok(v === null || v === undefined || v === "" || v === 0 || v === false || (Array.isArray(v) && v.length === 0), `${k} starts as ${JSON.stringify(v)}`);
  }
  assert.deepEqual(st.timings.edits, []);
});

test("changes of two kinds before one decision are 'other'; takeChange forgets them", () => {
  const cases = [
    { kinds: [], want: { at: 100, kind: "other" } },
    { kinds: ["rules"], want: { at: 1, kind: "rules" } },
    { kinds: ["input", "input"], want: { at: 1, kind: "input" } },
    { kinds: ["rules", "input"], want: { at: 1, kind: "other" } },
    { kinds: ["rules", "input", "rules"], want: { at: 1, kind: "other" } },
  ];
  for (const c of cases) {
    const st = state.newState();
    st.keepHash = true;
    c.kinds.forEach((k, i) => state.noteChange(st, k, i + 1));
    assert.deepEqual(state.takeChange(st, 100), c.want, `changes ${c.kinds}`);
    assert.deepEqual(state.takeChange(st, 200), { at: 200, kind: "other" }, `after taking ${c.kinds}`);
    assert.equal(st.keepHash, c.kinds.length === 0, `changes ${c.kinds}: keepHash`);
  }
});

test("a decision that made no new one keeps the last good one", () => {
  const st = state.newState();
  st.ref = "jax@v3";
  const decided = { explanation: {}, input: {}, ref: "jax@v3", ms: 1 };
  state.recordDecision(st, { handle: 3, problems: [], decided });
  assert.equal(st.lastGood, decided);
  state.recordDecision(st, { handle: 0, problems: [{ code: "cel_syntax" }], decided: null });
  assert.equal(st.lastGood, decided);
  assert.equal(st.handle, 0);
  assert.equal(state.goodDecision(st), decided);
  state.selectRef(st, "exchange@v2");
  assert.equal(state.goodDecision(st), null, "a decision of another version is not the good one");
});

test("the tests run once per handle, and again after forgetTests or a new version", () => {
  const st = state.newState();
  st.handle = 4;
  assert.ok(state.testsDue(st));
  state.recordTests(st, { passed: 1, failed: 0, cases: [] });
  assert.ok(!state.testsDue(st));
  state.forgetTests(st);
  assert.ok(state.testsDue(st));
  state.recordTests(st, null);
  state.selectRef(st, "jax@v2");
  assert.ok(state.testsDue(st));
});

test("a new input reveals its rule once, and not the rule shown before", () => {
  const st = state.newState();
  assert.equal(state.nextReveal(st, "gpu"), "", "no new input");
  state.setInput(st, "{}");
  assert.equal(st.inputText, "{}");
  assert.equal(state.nextReveal(st, "gpu"), "gpu");
  assert.equal(state.nextReveal(st, "gpu"), "", "revealed once");
  state.setInput(st, "{}");
  assert.equal(state.nextReveal(st, "gpu"), "", "the rule shown already");
  state.setInput(st, "{}");
  assert.equal(state.nextReveal(st, "cpu"), "cpu");
});
