// The decision module's client (decision.js) against exports of plain
// JavaScript functions: the module's memory growing between and inside
// calls, which leaves every view of the old memory detached, and each
// status read from the packed answer. No WebAssembly is compiled.

import assert from "node:assert/strict";
import { describe, test } from "node:test";

import { DECISION_ABI_VERSION, DecisionClient } from "../decision.js";
import { ModuleError } from "../errors.js";

const pack = (status, n) => (BigInt(status) << 32n) | BigInt(n);

/**
 * fakeDecider is a decision module's exports whose dlroute_decide answers
 * the input line upper-cased, with status, after growing the memory by
 * the pages growBefore(call) says (0: none).
 */
function fakeDecider({ status = 0, growBefore = () => 0 } = {}) {
  const memory = new WebAssembly.Memory({ initial: 2, maximum: 64 });
  let next = 1024;
  let call = 0;
  return {
    memory,
    dlroute_abi_version: () => DECISION_ABI_VERSION,
    dlroute_alloc: (size) => ((next += size), next - size),
    dlroute_free: () => {},
    dlroute_decide: (h, inPtr, inLen, out, cap) => {
      const pages = growBefore(call++);
      if (pages > 0) memory.grow(pages);
      const line = new TextDecoder().decode(new Uint8Array(memory.buffer, inPtr, inLen));
      const answer = new TextEncoder().encode(line.toUpperCase());
      if (answer.length > cap) return pack(7, answer.length);
      new Uint8Array(memory.buffer, out, answer.length).set(answer);
      return pack(status, answer.length);
    },
  };
}

describe("DecisionClient and a memory that grows", () => {
  test("lines decided after the memory grew, between calls and inside one, are read and answered whole", () => {
    const x = fakeDecider({ growBefore: (call) => (call % 2 === 1 ? 1 : 0) });
    const c = new DecisionClient(x);
    for (let i = 0; i < 6; i++) {
      const line = `{"platform":"gpu","platform_version":"fork ${i}"}`;
      assert.deepEqual(c.decide(1, line), { status: "ok", value: line.length, text: line.toUpperCase() }, `call ${i}`);
    }
    assert.equal(x.memory.buffer.byteLength, 5 * 65536, "the memory grew three times");
  });

  test("a line after the memory grew outside any call of this client", () => {
    const x = fakeDecider();
    const c = new DecisionClient(x);
    c.decide(1, "first");
    x.memory.grow(1); // as another export's call could
    assert.equal(c.decide(1, "second").text, "SECOND");
  });

  test("a line given as bytes after the memory grew", () => {
    const x = fakeDecider();
    const c = new DecisionClient(x);
    c.decide(1, "first");
    x.memory.grow(1);
    assert.equal(c.decide(1, new TextEncoder().encode("second")).text, "SECOND");
    assert.equal(c.decide(1, "third").text, "THIRD");
  });
});

describe("DecisionClient's statuses", () => {
  for (const [code, status] of [
    [1, "input_error"],
    [2, "eval_error"],
  ]) {
    test(`status ${code} is ${status}, with its text`, () => {
      const r = new DecisionClient(fakeDecider({ status: code })).decide(1, "{}");
      assert.deepEqual(r, { status, value: 2, text: "{}" });
    });
  }

  test("a status ABI version 3 does not have kills the instance", () => {
    const c = new DecisionClient(fakeDecider({ status: 6 }));
    assert.throws(() => c.decide(1, "{}"), (err) => err instanceof ModuleError && /answered status 6/.test(err.message));
    assert.equal(c.dead, true);
  });
});
