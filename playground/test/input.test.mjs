// The input line (input.js): what the page refuses to send, and what it
// keeps on a change of rule set.

import assert from "node:assert/strict";
import { test } from "node:test";

import { checkInput, inputObject, keepDeclared, inputErrorText, MAX_INPUT_BYTES } from "../input.js";

test("checkInput", () => {
  const cases = [
    { text: '{"platform":"gpu"}', object: { platform: "gpu" }, problem: "" },
    { text: "{}", object: {}, problem: "" },
    { text: "{", problem: /^the input is not valid JSON: / },
    { text: "", problem: /^the input is not valid JSON: / },
    { text: "[1]", problem: "the input must be a JSON object" },
    { text: "null", problem: "the input must be a JSON object" },
    { text: '"gpu"', problem: "the input must be a JSON object" },
    // Bytes count, not characters: 600,000 é are 1.2 MB.
    { text: `{"platform_version":"${"é".repeat(600_000)}"}`, problem: /^the input is 1\.1 MiB; the page sends at most 1 MiB/ },
    { text: `{"platform_version":"${"a".repeat(MAX_INPUT_BYTES - 24)}"}`, problem: "" },
  ];
  for (const c of cases) {
    const got = checkInput(c.text);
    const what = `checkInput(${c.text.slice(0, 30)}...)`;
    if (c.problem instanceof RegExp) assert.match(got.problem, c.problem, what);
    else assert.equal(got.problem, c.problem, what);
    if (c.object) assert.deepEqual(got.object, c.object, what);
    if (got.problem) assert.equal(got.object, null, what);
  }
});

test("inputObject", () => {
  assert.deepEqual(inputObject('{"a":1}'), { a: 1 });
  for (const text of ["[]", "null", "1", "{", ""]) assert.equal(inputObject(text), null, text);
});

test("keepDeclared keeps the fields the new rule set declares, in order", () => {
  assert.equal(keepDeclared('{"platform":"gpu","max_version":[1,1],"local_hardware_id":0}', ["platform", "local_hardware_id"]),
    '{"platform":"gpu","local_hardware_id":0}');
  assert.equal(keepDeclared("{not json", ["platform"]), "{not json");
  assert.equal(keepDeclared("[1,2]", ["platform"]), "[1,2]");
});

test("inputErrorText", () => {
  assert.equal(inputErrorText({ code: "wrong_type", message: "input shards is a string; want int" }), "wrong_type: input shards is a string; want int");
  assert.equal(inputErrorText({ code: "unknown_field", message: "input platfrom is not declared", hint: "did you mean platform?" }),
    "unknown_field: input platfrom is not declared (hint: did you mean platform?)");
});
