// A link read back into the page (link.js fromLink) and what a link keeps
// of the state (linkState).

import assert from "node:assert/strict";
import { test } from "node:test";

import { fromLink, linkState } from "../link.js";
import { newState } from "../state.js";
import { fakeWorkspace } from "./fakes.mjs";

const ws = () => fakeWorkspace({ "jax/v3/rules.yaml": "rules: []\n", "jax/v3/tests.yaml": "cases: []\n", "exchange/v2/rules.yaml": "rules: []\n" });

test("fromLink: edits as given, an edit that reads as served dropped", () => {
  const l = fromLink(ws(), { ref: "exchange@v2", input: "{}", edits: { "jax/v3/rules.yaml": "rules: [x]\n", "jax/v3/tests.yaml": "cases: []\n" }, file: "jax/v3/rules.yaml" }, "jax@v3");
  assert.deepEqual(l, { ref: "exchange@v2", edits: new Map([["jax/v3/rules.yaml", "rules: [x]\n"]]), file: "jax/v3/rules.yaml", input: "{}", warning: "" });
});

test("fromLink: a version or a file these rules do not have is left out, and said so", () => {
  const other = fromLink(ws(), { ref: "jax@v9", input: "{}", edits: {} }, "jax@v3");
  assert.equal(other.ref, "jax@v3");
  assert.equal(other.file, "");
  assert.equal(other.warning, "The link names jax@v9, which these rules do not have; showing jax@v3.");
  const files = fromLink(ws(), { ref: "jax@v3", input: "{}", edits: { "jax/v3/extra.yaml": "x", "numpy/v1/rules.yaml": "y", "jax/v3/rules.yaml": "z" } }, "jax@v3");
  assert.deepEqual([...files.edits.keys()], ["jax/v3/rules.yaml"]);
  assert.equal(files.warning, "The link edits jax/v3/extra.yaml, numpy/v1/rules.yaml, which these rules do not have; those edits were left out.");
});

test("linkState: the version, the input, every edit and the open file", () => {
  const st = newState();
  st.ws = ws();
  st.ws.edits.set("jax/v3/rules.yaml", "rules: [x]\n");
  Object.assign(st, { ref: "jax@v3", inputText: '{"platform":"gpu"}', active: "jax/v3/tests.yaml" });
  assert.deepEqual(linkState(st), { ref: "jax@v3", input: '{"platform":"gpu"}', edits: { "jax/v3/rules.yaml": "rules: [x]\n" }, file: "jax/v3/tests.yaml" });
});
