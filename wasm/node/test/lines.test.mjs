// Lines as `dlroute resolve --json` cuts them (cmd/dlroute/resolve.go's
// readLine), whatever the chunks they arrive in.

import assert from "node:assert/strict";
import { test } from "node:test";

import { LineSplitter } from "../lines.mjs";

// split cuts input into lines with a limit of 8 bytes, fed in chunks of
// size bytes, and shows each line as text or TOO_LONG.
function split(input, size) {
  const s = new LineSplitter(8);
  const bytes = Buffer.from(input, "latin1");
  const out = [];
  for (let i = 0; i < bytes.length; i += size) out.push(...s.push(bytes.subarray(i, i + size)));
  const last = s.end();
  if (last) out.push(last);
  return out.map((l) => (l.tooLong ? "TOO_LONG" : l.bytes.toString("latin1")));
}

const cases = [
  ["lines", "a\nbb\n", ["a", "bb"]],
  ["a last line without newline", "a\nbb", ["a", "bb"]],
  ["CRLF", "a\r\nbb\r\n", ["a", "bb"]],
  ["one CR is dropped, not two", "a\r\r\n", ["a\r"]],
  ["a last line of one CR is no line", "a\n\r", ["a"]],
  ["a last line ending in CR", "a\nb\r", ["a", "b"]],
  ["an empty line in the middle is a line", "a\n\nb\n", ["a", "", "b"]],
  ["nothing", "", []],
  ["exactly the limit", "12345678\n", ["12345678"]],
  ["the limit and a CR", "12345678\r\n", ["12345678"]],
  ["one over the limit", "123456789\nok\n", ["TOO_LONG", "ok"]],
  ["one over the limit and a CR", "123456789\r\nok\n", ["TOO_LONG", "ok"]],
  ["far over the limit", `${"x".repeat(100)}\nok\n`, ["TOO_LONG", "ok"]],
  ["far over the limit, last", `ok\n${"x".repeat(100)}`, ["ok", "TOO_LONG"]],
  ["NUL and invalid UTF-8 are bytes", "\x00\n\xff\xfe\n", ["\x00", "\xff\xfe"]],
];
for (const [name, input, want] of cases) {
  test(name, () => {
    for (const size of [1, 2, 3, 7, 1 << 16]) assert.deepEqual(split(input, size), want, `in chunks of ${size}`);
  });
}
