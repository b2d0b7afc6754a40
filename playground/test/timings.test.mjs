// The page's measures (timings.js): the first decision is the cold load,
// each later one an edit, counted by what changed.

import assert from "node:assert/strict";
import { test } from "node:test";

import { markDecision, coldLoad } from "../timings.js";
import { newState } from "../state.js";

const measures = (name) => performance.getEntriesByName(name).length;

test("the first decision is the cold load; each later one an edit of its kind", () => {
  const st = newState();
  assert.equal(coldLoad(), undefined);
  markDecision(st, { at: performance.now(), kind: "other" }, { rules: 1 });
  assert.ok(coldLoad() > 0, "the cold load is measured from the navigation's start");
  assert.deepEqual(st.timings.edits, []);
  assert.deepEqual(st.timings.first, { rules: 1 });

  markDecision(st, { at: performance.now() - 20, kind: "rules" }, { rules: 2 });
  markDecision(st, { at: performance.now() - 10, kind: "input" }, { rules: 3 });
  markDecision(st, { at: performance.now() - 10, kind: "other" }, { rules: 4 });
  assert.equal(measures("dlroute:cold-to-first-decision"), 1);
  assert.equal(measures("dlroute:edit-to-decision"), 3);
  assert.equal(measures("dlroute:rules-edit-to-decision"), 1);
  assert.equal(measures("dlroute:input-edit-to-decision"), 1);
  assert.equal(st.timings.edits.length, 3);
  assert.deepEqual(st.timings.edits.map((e) => [e.kind, e.rules]), [["rules", 2], ["input", 3], ["other", 4]], "each edit keeps its kind and parts");
  assert.ok(st.timings.edits[0].ms >= 20, `the rules edit took ${st.timings.edits[0].ms} ms`);
  assert.deepEqual(st.timings.first, { rules: 1 });
  assert.deepEqual(st.timings.last, { rules: 4 });
});
