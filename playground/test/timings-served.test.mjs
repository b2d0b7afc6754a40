// The page's measures (timings.js) when the server decided the first
// screen: that decision is the cold load, the engine's first after it is
// measured apart and is no edit, and the edits are counted from there.
// (A file of its own: the marks are the process's, and the first
// decision is marked once.)

import assert from "node:assert/strict";
import { test } from "node:test";

import { markDecision, coldLoad } from "../timings.js";
import { newState } from "../state.js";

test("the server's first decision is the cold load, the engine's first is measured apart", () => {
  const st = newState();
  markDecision(st, { at: performance.now(), kind: "other" }, { show: 1 }, true);
  const served = coldLoad();
  assert.ok(served > 0);
  assert.equal(coldLoad("engine-decision"), undefined, "the engine has decided nothing yet");
  assert.equal(st.timings.first, undefined, "the parts are the engine's decisions' only");

  markDecision(st, { at: performance.now(), kind: "other" }, { rules: 1 });
  assert.ok(coldLoad("engine-decision") >= served);
  assert.equal(coldLoad(), served, "the first decision stays the server's");
  assert.deepEqual(st.timings.first, { rules: 1 });
  assert.deepEqual(st.timings.edits, [], "the engine's first decision is no edit");

  markDecision(st, { at: performance.now() - 5, kind: "rules" }, { rules: 2 });
  assert.deepEqual(st.timings.edits.map((e) => [e.kind, e.rules]), [["rules", 2]]);
  assert.equal(performance.getEntriesByName("dlroute:cold-to-first-decision").length, 1);
  assert.equal(performance.getEntriesByName("dlroute:cold-to-engine-decision").length, 1);
});
