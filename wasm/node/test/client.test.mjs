// The ABI client (client.js) against a module of plain JavaScript
// functions that answer what a test tells them: each status, too_small
// with and without room, buffers outside memory, traps. No WebAssembly is
// compiled, so what a real module never does can be made to happen.

import assert from "node:assert/strict";
import { describe, test } from "node:test";

import { encodeArchive } from "../archive.js";
import { ABI_VERSION, CALL_ATTEMPTS, Client, FIRST_BUFFER, STATUS, checkModule, unpack } from "../client.js";
import { ModuleError } from "../errors.js";

const PAGE = 64 << 10;
const pack = (status, n) => (BigInt(status) << 32n) | BigInt(n);
const text = (bytes) => new TextDecoder().decode(bytes);

/**
 * fakeExports is a module's exports: one page of memory per pages, a bump
 * allocator (alloc overrides it), and answer(name, args) for every other
 * export, which records its calls.
 */
function fakeExports({ pages = 4, version = ABI_VERSION, alloc, answer = () => pack(0, 0) } = {}) {
  const memory = new WebAssembly.Memory({ initial: pages });
  let next = 1024;
  const calls = [];
  const x = {
    memory,
    calls,
    freed: [],
    dlroute_abi_version: () => version,
    dlroute_alloc: alloc ?? ((size) => ((next += size), next - size)),
    dlroute_free: (p) => x.freed.push(p),
    dlroute_release: (h) => calls.push(["dlroute_release", h]),
  };
  for (const name of ["dlroute_load", "dlroute_ruleset", "dlroute_describe", "dlroute_resolve_json", "dlroute_explain_json", "dlroute_exchange", "dlroute_test", "dlroute_diff"]) {
    x[name] = (...args) => {
      calls.push([name, ...args]);
      return answer(name, args, memory);
    };
  }
  return x;
}

/** writeAt puts s in memory at p and returns its length. */
function writeAt(memory, p, s) {
  const b = new TextEncoder().encode(s);
  new Uint8Array(memory.buffer, p, b.length).set(b);
  return b.length;
}

/** throwsModuleError asserts that f throws a ModuleError whose message matches. */
function throwsModuleError(f, message) {
  let thrown;
  assert.throws(f, (err) => {
    assert.ok(err instanceof ModuleError, `${err} is not a ModuleError`);
    assert.equal(err.code, "module_error");
    assert.match(err.message, message);
    thrown = err;
    return true;
  });
  return thrown;
}

describe("statuses", () => {
  test("each status of ABI.md by its name, with the output it wrote", () => {
    for (const [code, name] of STATUS.entries()) {
      if (name === "too_small") continue;
      const x = fakeExports({ answer: (_, args, memory) => pack(code, writeAt(memory, args.at(-2), `{"n":${code}}`)) });
      const r = new Client(x).call("dlroute_describe", null, 7);
      assert.deepEqual([r.status, text(r.out)], [name, `{"n":${code}}`], `status ${code}`);
    }
  });

  test("a status ABI version 1 does not have kills the instance, and every later call says so", () => {
    for (const status of [10, 0x80000000]) {
      const x = fakeExports({ answer: () => pack(status, 0) });
      const c = new Client(x);
      const err = throwsModuleError(() => c.call("dlroute_describe", null, 1), new RegExp(`^dlroute_describe answered status ${status}, which ABI version 1 does not have$`));
      assert.equal(c.dead, true);
      assert.equal(assert.throws(() => c.call("dlroute_describe", null, 1), (e) => e === err), undefined);
    }
  });

  test("unpack reads the status and the value as unsigned", () => {
    assert.deepEqual(unpack(pack(7, 0xffffffff)), [7, 0xffffffff]);
    assert.deepEqual(unpack(-1n), [0xffffffff, 0xffffffff]);
  });
});

describe("calls", () => {
  test("the arguments, then the input buffer holding the input, then the output buffer", () => {
    let seen;
    const x = fakeExports({
      answer: (name, args, memory) => {
        const [handle, inp, inLen, out, outCap] = args;
        seen = { handle, input: text(new Uint8Array(memory.buffer, inp, inLen)), outCap };
        return pack(0, writeAt(memory, out, "{}"));
      },
    });
    const r = new Client(x).call("dlroute_resolve_json", new TextEncoder().encode('{"platform":"cpu"}'), 3);
    assert.deepEqual(seen, { handle: 3, input: '{"platform":"cpu"}', outCap: FIRST_BUFFER });
    assert.deepEqual([r.status, r.value, text(r.out)], ["ok", 2, "{}"]);
  });

  test("an ok dlroute_ruleset answers a handle and no output; its error answers an output", () => {
    const c = new Client(fakeExports({ answer: () => pack(0, 42) }));
    assert.deepEqual(c.call("dlroute_ruleset", new TextEncoder().encode("jax")), { status: "ok", value: 42, out: null });
    const d = new Client(fakeExports({ answer: (_, args, memory) => pack(4, writeAt(memory, args.at(-2), '{"code":"no_ruleset"}')) }));
    assert.equal(text(d.call("dlroute_ruleset", new TextEncoder().encode("nope")).out), '{"code":"no_ruleset"}');
  });

  test("an input larger than the buffer grows it", () => {
    let got = 0;
    const x = fakeExports({ pages: 8, answer: (_, [, inLen]) => ((got = inLen), pack(0, 0)) });
    new Client(x).call("dlroute_load", new Uint8Array(FIRST_BUFFER + 1).fill(1));
    assert.equal(got, FIRST_BUFFER + 1);
    assert.equal(x.freed.length, 1, "the old input buffer is freed");
  });

  test("an export the module lacks is a ModuleError, and the instance lives on", () => {
    const x = fakeExports();
    delete x.dlroute_diff;
    const c = new Client(x);
    assert.equal(c.has("dlroute_diff"), false);
    throwsModuleError(() => c.call("dlroute_diff", null, 1, 2), /^the module does not export dlroute_diff$/);
    assert.equal(c.dead, false);
  });

  test("a trap kills the instance: ModuleError with the trap as its cause, then release does nothing", () => {
    const trap = new WebAssembly.RuntimeError("unreachable");
    const x = fakeExports({ answer: () => { throw trap; } });
    const c = new Client(x);
    const err = throwsModuleError(() => c.call("dlroute_test", null, 1), /^the module trapped in dlroute_test: unreachable$/);
    assert.equal(err.cause, trap);
    assert.match(err.hint, /fresh instance/);
    assert.equal(c.dead, true);
    c.release(1);
    assert.deepEqual(x.calls.filter(([n]) => n === "dlroute_release"), []);
  });
});

describe("too_small and its limit", () => {
  test("too_small grows the output buffer to the size asked, and the call is made again", () => {
    const body = "x".repeat(FIRST_BUFFER + 10);
    const x = fakeExports({ pages: 8, answer: (_, args, memory) => (args.at(-1) < body.length ? pack(7, body.length) : pack(0, writeAt(memory, args.at(-2), body))) });
    const r = new Client(x).call("dlroute_diff", null, 1, 2);
    assert.equal(text(r.out), body);
    assert.deepEqual(x.calls.map((c) => c.at(-1)), [FIRST_BUFFER, 2 * FIRST_BUFFER], "grown to at least twice, so that growing is amortised");
  });

  test(`too_small every time: ${CALL_ATTEMPTS} calls, then a ModuleError`, () => {
    const x = fakeExports({ pages: 64, answer: (_, args) => pack(7, args.at(-1) + 1) });
    const c = new Client(x);
    throwsModuleError(() => c.call("dlroute_describe", null, 1), new RegExp(`^dlroute_describe answered too_small ${CALL_ATTEMPTS} times$`));
    assert.equal(x.calls.length, CALL_ATTEMPTS);
    assert.equal(c.dead, true);
  });

  test("too_small that asks for no more room than the buffer has: a ModuleError at once", () => {
    const x = fakeExports({ answer: (_, args) => pack(7, args.at(-1)) });
    throwsModuleError(() => new Client(x).call("dlroute_describe", null, 1), /^dlroute_describe answered too_small for 65536 bytes, and its buffer has 65536$/);
    assert.equal(x.calls.length, 1);
  });
});

describe("memory bounds", () => {
  test("an output longer than its buffer", () => {
    const x = fakeExports({ answer: (_, args) => pack(0, args.at(-1) + 1) });
    const c = new Client(x);
    throwsModuleError(() => c.call("dlroute_describe", null, 1), /^dlroute_describe answered 65537 bytes of output, and its buffer has 65536$/);
    assert.equal(c.dead, true);
  });

  test("a buffer outside the module's memory", () => {
    throwsModuleError(() => new Client(fakeExports({ pages: 1, alloc: () => PAGE - 16 })), /^the module's buffer of 65536 bytes at 65520 is outside its memory$/);
    throwsModuleError(() => new Client(fakeExports({ alloc: () => -16 })), /^the module's buffer of 65536 bytes at 4294967280 is outside its memory$/);
  });

  test("a buffer grown past the module's memory", () => {
    const x = fakeExports({ pages: 3, answer: (_, args) => pack(7, 2 * args.at(-1)) });
    throwsModuleError(() => new Client(x).call("dlroute_describe", null, 1), /^the module's buffer of 131072 bytes at \d+ is outside its memory$/);
  });

  test("an allocation that fails", () => {
    throwsModuleError(() => new Client(fakeExports({ alloc: () => 0 })), /^the module could not allocate 65536 bytes$/);
  });
});

describe("start-up", () => {
  test("a module of another ABI version", () => {
    const err = throwsModuleError(() => new Client(fakeExports({ version: 2 })), /^the module has ABI version 2; this host speaks version 1$/);
    assert.match(err.hint, /rebuild the module/);
  });

  test("a module without the exports the host calls names them all", () => {
    const x = fakeExports();
    delete x.dlroute_free;
    delete x.dlroute_test;
    throwsModuleError(() => new Client(x, ["dlroute_load", "dlroute_test"]), /^the module does not export dlroute_free, dlroute_test: it is not a dlroute module of ABI version 1$/);
  });

  test("checkModule refuses a module that is not dlroute's", () => {
    const empty = new WebAssembly.Module(new Uint8Array([0, 0x61, 0x73, 0x6d, 1, 0, 0, 0]));
    const err = throwsModuleError(() => checkModule(empty), /^the module does not export memory, _initialize, dlroute_abi_version: it is not a dlroute module$/);
    assert.match(err.hint, /GOOS=wasip1 GOARCH=wasm go build/);
  });

  test("memoryBytes is the module's memory", () => {
    assert.equal(new Client(fakeExports({ pages: 5 })).memoryBytes, 5 * PAGE);
  });
});

describe("the rules archive", () => {
  test("each file as a u32 length and its UTF-8 path, a u32 length and its data, in the order given", () => {
    const got = encodeArchive([["jax/v3/é.yaml", "ab"], ["a/v1/x", new Uint8Array([0, 255])]]);
    const want = [14, 0, 0, 0, ...new TextEncoder().encode("jax/v3/é.yaml"), 2, 0, 0, 0, 97, 98, 6, 0, 0, 0, ...new TextEncoder().encode("a/v1/x"), 2, 0, 0, 0, 0, 255];
    assert.deepEqual([...got], want);
    assert.deepEqual(encodeArchive([]), new Uint8Array(0));
  });
});
