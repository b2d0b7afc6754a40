// The host functions: platform_version from a value or a callback, and
// copy_to_host on ArrayBuffers, seen through resolve and exchange.

import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { rm } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { after, before, describe, test } from "node:test";

import { HostError, InputError, load } from "../index.mjs";
import { FEW, MODULE_PATH, compiledModule, tempRules } from "./helpers.mjs";

// The engine's host functions call these, so that one engine serves every test.
let platformVersion = () => undefined;
let copyToHost = (src) => src.slice(0);
let engine;
before(async () => {
  engine = await load({ module: await compiledModule(), platformVersion: (device) => platformVersion(device), copyToHost: (src) => copyToHost(src) });
});

describe("platform_version", () => {
  const gpu1 = { platform: "gpu", local_hardware_id: 1 };

  test("the host's answer for the input's device fills a platform_version left out", () => {
    const asked = [];
    platformVersion = (device) => (asked.push(device), "rocm 60200");
    assert.deepEqual(engine.ruleset("jax").resolve(gpu1), { device_type: "kDLROCM", device_type_code: 10, device_id: 1, rule: "gpu", ruleset: "jax@v3" });
    assert.deepEqual(asked, [1]);
    platformVersion = () => assert.fail("asked, with platform_version given");
    assert.equal(engine.ruleset("jax").resolve({ ...gpu1, platform_version: "cuda 12030" }).device_type, "kDLCUDA");
  });

  test("a null id asks about device 0", () => {
    const asked = [];
    platformVersion = (device) => (asked.push(device), "cuda 12030");
    assert.equal(engine.ruleset("jax").resolve({ platform: "gpu", local_hardware_id: null, memory_kind: "pinned_host" }).rule, "gpu-no-hardware-id");
    assert.deepEqual(asked, [0]);
  });

  test("a version longer than the guest's first buffer", () => {
    const long = "PJRT C API\n" + "x".repeat(300) + " cuda 12030";
    platformVersion = () => long;
    assert.equal(engine.ruleset("jax").resolve({ ...gpu1, platform: "gpu", memory_kind: "device", local_hardware_id: 2 }).device_type, "kDLCUDA");
  });

  test("no answer (undefined) is the native engine's missing_field", () => {
    platformVersion = () => undefined;
    assert.throws(() => engine.ruleset("jax").resolve(gpu1), (err) => err instanceof InputError && err.code === "missing_field");
  });

  test("a callback that throws is a HostError naming the device, and the engine keeps working", () => {
    platformVersion = () => {
      throw new Error("no driver");
    };
    assert.throws(() => engine.ruleset("jax").resolve(gpu1), (err) => err instanceof HostError && err.code === "missing_field" && /could not read device 1/.test(err.message));
    platformVersion = () => 12030;
    assert.throws(() => engine.ruleset("jax").resolve({ ...gpu1, local_hardware_id: 3 }), (err) => err instanceof HostError && /device 3/.test(err.message));
    assert.equal(engine.ruleset("jax").resolve({ ...gpu1, platform_version: "cuda 12030" }).device_type, "kDLCUDA");
  });

  test("a fixed value", async () => {
    const fixed = await load({ module: await compiledModule(), platformVersion: "oneapi 2026.0" });
    assert.equal(fixed.ruleset("jax").resolve(gpu1).device_type, "kDLOneAPI");
  });
});

describe("exchange and copy_to_host", () => {
  const bytes = () => new Uint8Array([1, 2, 3, 4]).buffer;
  const unknown = { platform: "gpu", platform_version: "<unknown>", local_hardware_id: 0, max_version: [1, 1] };

  test("the seed's unknown platform is copied into host memory, IS_COPIED", () => {
    copyToHost = (src) => src.slice(0);
    const src = bytes();
    const r = engine.ruleset("exchange").exchange(unknown, src);
    assert.equal(r.decision.rule, "unknown-platform-host-copy");
    assert.deepEqual(r.decision.flags, ["DLPACK_FLAG_BITMASK_IS_COPIED"]);
    assert.equal(r.copied, true);
    assert.notEqual(r.buffer, src);
    assert.deepEqual(new Uint8Array(r.buffer), new Uint8Array(src));
  });

  test("an export in place hands back the source", () => {
    copyToHost = () => assert.fail("copied an export in place");
    const src = bytes();
    const r = engine.ruleset("exchange").exchange({ platform: "gpu", platform_version: "cuda 12030", local_hardware_id: 0 }, src);
    assert.equal(r.decision.rule, "in-place");
    assert.equal(r.buffer, src);
    assert.equal(r.copied, false);
  });

  test("an exception exports nothing", () => {
    const r = engine.ruleset("exchange").exchange({ ...unknown, shards: 2 }, bytes());
    assert.equal(r.decision.error.type, "BufferError");
    assert.equal(r.buffer, null);
  });

  test("a copy onto a GPU: HostError no_copier", () => {
    assert.throws(() => engine.ruleset("exchange").exchange({ platform: "gpu", platform_version: "cuda 12030", local_hardware_id: 0, copy: true }, bytes()), (err) => err instanceof HostError && err.code === "no_copier");
  });

  test("a copier that throws: HostError copy_failed with the copier's error as its cause", () => {
    const cause = new RangeError("out of host memory");
    copyToHost = () => {
      throw cause;
    };
    assert.throws(() => engine.ruleset("exchange").exchange(unknown, bytes()), (err) => {
      assert.ok(err instanceof HostError);
      assert.equal(err.code, "copy_failed");
      assert.equal(err.message, "copying the array into host memory failed: out of host memory");
      assert.equal(err.cause, cause);
      return true;
    });
    copyToHost = () => "not a buffer";
    assert.throws(() => engine.ruleset("exchange").exchange(unknown, bytes()), { code: "copy_failed" });
    copyToHost = (src) => src.slice(0);
    assert.equal(engine.ruleset("exchange").exchange(unknown, bytes()).copied, true);
  });

  test("a host without a copier: no_copier", async () => {
    const none = await load({ module: await compiledModule(), copyToHost: null });
    assert.throws(() => none.ruleset("exchange").exchange(unknown, bytes()), { name: "HostError", code: "no_copier" });
  });
});

describe("the WASI warning", () => {
  const script = (options) => `
    import { load } from ${JSON.stringify(fileURLToPath(new URL("../index.mjs", import.meta.url)))};
    await load(${options});
    process.emitWarning("another experiment", "ExperimentalWarning");
  `;
  const run = (options) => spawnSync(process.execPath, ["--input-type=module", "-e", script(JSON.stringify(options))], { encoding: "utf8" }).stderr;
  // Only the compiler module, which rules handed to load need, runs on WASI.
  const compiler = { module: MODULE_PATH };
  before(async () => {
    compiler.rules = await tempRules({}, FEW);
  });
  after(() => rm(compiler.rules, { recursive: true, force: true }));

  test("the package's own is not printed; every other warning is", () => {
    const stderr = run(compiler);
    assert.doesNotMatch(stderr, /WASI/);
    assert.match(stderr, /ExperimentalWarning: another experiment/);
  });

  test("wasiWarning: true prints it", () => {
    assert.match(run({ ...compiler, wasiWarning: true }), /ExperimentalWarning: WASI is an experimental feature/);
  });

  test("the default engine loads no WASI: nothing to print, even with wasiWarning: true", () => {
    const stderr = run({ wasiWarning: true });
    assert.doesNotMatch(stderr, /WASI/);
    assert.match(stderr, /ExperimentalWarning: another experiment/);
  });
});
