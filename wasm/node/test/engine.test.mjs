// The package against the module built from this checkout: decisions,
// errors, rule sets, and the ABI surface.

import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { before, describe, test } from "node:test";

import { ABI_VERSION, DlrouteError, EvaluationError, InputError, load } from "../index.mjs";
import { ABI_GOLDEN, compiledModule } from "./helpers.mjs";

const cuda = { platform: "gpu", platform_version: "cuda 12030", local_hardware_id: 0 };
const cudaDecision = { device_type: "kDLCUDA", device_type_code: 2, device_id: 0, rule: "gpu", ruleset: "jax@v3" };

let engine;
let jax;
before(async () => {
  engine = await load({ module: await compiledModule() });
  jax = engine.ruleset("jax");
});

describe("the ABI", () => {
  test("the module exports and imports exactly what the golden file lists, and its version is 1", async () => {
    const golden = (await readFile(ABI_GOLDEN, "utf8")).split("\n").filter((l) => l && !l.startsWith("#"));
    assert.deepEqual(golden[0], "abi_version 1");
    assert.equal(ABI_VERSION, 1);
    assert.equal(engine.abiVersion, 1);
    const module = await compiledModule();
    const exports = WebAssembly.Module.exports(module).map((e) => `export ${e.name}`);
    const imports = WebAssembly.Module.imports(module).map((i) => `import ${i.module} ${i.name}`);
    const want = (kind) => [...new Set(golden.filter((l) => l.startsWith(kind)).map((l) => l.split(" ").slice(0, kind === "export" ? 2 : 3).join(" ")))].sort();
    assert.deepEqual([...new Set(exports)].sort(), want("export"));
    assert.deepEqual([...new Set(imports)].sort(), want("import"));
  });
});

describe("resolve", () => {
  test("a device, as a plain object with the command line's field names", () => {
    assert.deepEqual(jax.resolve(cuda), cudaDecision);
  });

  test("an exception JAX would raise is a decision, not an error", () => {
    assert.deepEqual(jax.resolve({ ...cuda, platform_version: "<unknown>" }), {
      error: { type: "BufferError", message: "Unknown GPU platform for __dlpack__: <unknown>" },
      rule: "gpu-unknown-platform",
      ruleset: "jax@v3",
    });
  });

  test("a field set to undefined is left out, and gets its default", () => {
    assert.deepEqual(jax.resolve({ ...cuda, memory_kind: undefined }), cudaDecision);
  });

  test("a bigint keeps every digit", () => {
    assert.equal(jax.resolve({ ...cuda, local_hardware_id: 9007199254740993n }).device_id, 9007199254740992, "JSON.parse rounds the answer");
    assert.match(jax.resolveJSON(`{"platform":"gpu","platform_version":"cuda 12030","local_hardware_id":9007199254740993}`), /"device_id":9007199254740993,/);
  });

  test("resolveJSON answers the bytes the command line writes, for a string or its bytes", () => {
    const want = '{"device_type":"kDLCUDA","device_type_code":2,"device_id":0,"rule":"gpu","ruleset":"jax@v3"}';
    assert.equal(jax.resolveJSON(JSON.stringify(cuda)), want);
    assert.equal(jax.resolveJSON(new TextEncoder().encode(JSON.stringify(cuda))), want);
    assert.equal(jax.resolveJSON(JSON.stringify(cuda)), want, "a remembered answer is the same");
  });

  test("resolveMany answers every input, errors as the command line's lines", () => {
    assert.deepEqual(jax.resolveMany([cuda, { platform: 1 }, { ...cuda, shards: 2 }]), [
      cudaDecision,
      { input_error: { line: 2, code: "wrong_type", message: "input platform is an int; want string" } },
      { error: { type: "BufferError", message: "__dlpack__ only supported for unsharded arrays." }, rule: "sharded", ruleset: "jax@v3" },
    ]);
  });

  test("explain says which rules were tried", () => {
    const x = jax.explain(cuda);
    assert.deepEqual(x.decision, cudaDecision);
    assert.ok(Array.isArray(x.trace.rules) && x.trace.rules.length > 0);
  });

  test("every version by its ref", () => {
    assert.equal(engine.ruleset("jax@v1").ref, "jax@v1");
    assert.deepEqual(engine.ruleset("jax@v2").resolve({ ...cuda, platform_version: "oneapi 2026.0" }).rule, "gpu-unknown-platform");
    const ex = engine.ruleset("exchange");
    assert.equal(ex.ref, "exchange@v2");
    assert.deepEqual(ex.inputs.map((i) => i.name), ["platform", "platform_version", "memory_kind", "local_hardware_id", "shards", "dl_device", "copy", "max_version", "stream"]);
  });
});

describe("bad input: a clear error with a code, and the engine keeps working", () => {
  const cases = [
    ["a string id", { ...cuda, local_hardware_id: "0" }, InputError, "wrong_type", "input local_hardware_id is a string; want int or null"],
    ["a fractional id", { ...cuda, local_hardware_id: 1.5 }, InputError, "wrong_type", undefined],
    ["NaN, which JSON.stringify would make null", { ...cuda, local_hardware_id: NaN }, InputError, "wrong_type", "input local_hardware_id is NaN, which JSON cannot carry"],
    ["Infinity", { ...cuda, shards: Infinity }, InputError, "wrong_type", "input shards is Infinity, which JSON cannot carry"],
    ["a function, which JSON.stringify would drop", { ...cuda, memory_kind: () => "device" }, InputError, "wrong_type", "input memory_kind is a function, which JSON cannot carry"],
    ["a field no rule set declares", { ...cuda, colour: "red" }, InputError, "unknown_field", 'unknown input "colour"'],
    ["a required field left out", { platform: "gpu" }, InputError, "missing_field", undefined],
    ["not an object", ["gpu"], InputError, "json_syntax", "input is a list; want a JSON object"],
    ["a string over the limit", { ...cuda, platform_version: "x".repeat(4097) }, InputError, "too_long", "input platform_version is 4097 bytes long; the limit is 4096"],
  ];
  for (const [name, input, cls, code, message] of cases) {
    test(name, () => {
      assert.throws(() => jax.resolve(input), (err) => {
        assert.ok(err instanceof cls, `${err} is not a ${cls.name}`);
        assert.ok(err instanceof DlrouteError && err instanceof Error);
        assert.equal(err.code, code);
        if (message) assert.equal(err.message, message);
        return true;
      });
      assert.deepEqual(jax.resolve(cuda), cudaDecision);
    });
  }

  test("resolveJSON of a line that is not JSON", () => {
    assert.throws(() => jax.resolveJSON("{"), { name: "InputError", code: "json_syntax", message: "unexpected EOF" });
    assert.throws(() => jax.resolveJSON(new Uint8Array([0x7b, 0xff, 0x7d])), { code: "invalid_utf8" });
  });

  test("a rule set that does not exist", () => {
    for (const ref of ["nope", "jax@v9"]) {
      assert.throws(() => engine.ruleset(ref), (err) => err instanceof DlrouteError && err.code === "no_ruleset");
    }
    assert.deepEqual(jax.resolve(cuda), cudaDecision);
  });

  test("an error converts to the command line's error object", () => {
    try {
      jax.resolve({ ...cuda, colour: "red" });
      assert.fail("no error");
    } catch (err) {
      assert.deepEqual(JSON.parse(JSON.stringify(err)), { code: "unknown_field", message: 'unknown input "colour"', hint: "the inputs of jax@v3 are: platform, platform_version, memory_kind, local_hardware_id, shards" });
      assert.ok(!(err instanceof EvaluationError));
    }
  });
});
