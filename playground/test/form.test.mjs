// The form's fields as JSON (form.js fieldJSON) and back (fieldText): a
// value that does not parse as its type is sent as a string, for the
// engine's wrong_type to name.

import assert from "node:assert/strict";
import { test } from "node:test";

import { fieldJSON, fieldText, longText } from "../form.js";

test("fieldJSON", () => {
  const cases = [
    ["string", "gpu", false, '"gpu"'],
    ["string", 'say "hi"\n', false, '"say \\"hi\\"\\n"'],
    ["string", "", false, '""'],
    ["string?", "x", true, "null"],
    ["int", " 12 ", false, "12"],
    ["int", "-1", false, "-1"],
    ["int", "18446744073709551615", false, "18446744073709551615"], // never rounded
    ["int", "1.5", false, '"1.5"'],
    ["int", "one", false, '"one"'],
    ["int", "", false, undefined],
    ["int?", "", true, "null"],
    ["uint", "7", false, "7"],
    ["bool", "true", false, "true"],
    ["bool?", "null", false, "null"],
    ["list(int)", "1, 0", false, "[1,0]"],
    ["list(int)", "[1,1]", false, "[1,1]"],
    ["list(int)", "", false, "[]"],
    ["list(int)?", "", false, "null"],
    ["list(int)", "1, x", false, '"1, x"'],
    ["map", '{"a":1}', false, '{"a":1}'],
    ["map", "{a", false, '"{a"'],
  ];
  for (const [type, text, isNull, want] of cases) {
    assert.equal(fieldJSON(type, text, isNull), want, `fieldJSON(${type}, ${JSON.stringify(text)}, ${isNull})`);
  }
});

test("fieldText", () => {
  const cases = [
    ["string", "gpu", "gpu"],
    ["int", 0, "0"],
    ["int?", null, ""],
    ["int", undefined, ""],
    ["bool", true, "true"],
    ["bool?", null, "null"],
    ["list(int)", [1, 0], "1, 0"],
    ["map", { a: 1 }, '{"a":1}'],
  ];
  for (const [type, value, want] of cases) assert.equal(fieldText(type, value), want, `fieldText(${type}, ${JSON.stringify(value)})`);
});

test("a field's text read back is the value it showed", () => {
  for (const [type, value] of [["int", 3], ["list(int)", [1, 1]], ["string", "cuda 12030"], ["bool", false]]) {
    assert.deepEqual(JSON.parse(fieldJSON(type, fieldText(type, value), false)), value, `${type} ${JSON.stringify(value)}`);
  }
});

test("longText says how long a value past the engine's limit is", () => {
  assert.equal(longText(2_097_152, 2_097_152), "2,097,152 characters (2.0 MiB), more than the 4096 bytes the engine takes");
  assert.equal(longText(3000, 6000), "3,000 characters (5.9 KiB), more than the 4096 bytes the engine takes");
});
