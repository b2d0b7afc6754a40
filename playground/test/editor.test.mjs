// The editor's column conversion (editor.js utf16Index): the engine's
// columns count UTF-8 bytes, the textarea's indices UTF-16 code units.

import assert from "node:assert/strict";
import { test } from "node:test";

import { utf16Index } from "../editor.js";

test("utf16Index", () => {
  const cases = [
    ["abc", 0, 0], ["abc", 2, 2], ["abc", 9, 3],
    ["ééx", 2, 1], ["ééx", 4, 2], ["ééx", 5, 3],
    ["€x", 3, 1],
    ["😀x", 4, 2], // a surrogate pair: 4 bytes, 2 code units
    ["", 1, 0],
  ];
  for (const [s, bytes, want] of cases) assert.equal(utf16Index(s, bytes), want, `utf16Index(${s}, ${bytes})`);
});
