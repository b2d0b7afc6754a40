// Loading: modules that are missing, not WebAssembly, or of another ABI
// version (the compiler module, which rules handed to load compile in, and
// the decision module, which the embedded rules are decided with); rules
// that do not load; and rules replaced while in service.

import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { fileURLToPath } from "node:url";

import { DEFAULT_DECISION_MODULE, DEFAULT_MODULE, LoadError, ModuleError, load, packRules } from "../index.mjs";
import { CALLED_EXPORTS } from "../instance.mjs";
import { FEW, MODULE_PATH, RULES, checkedInDecisionModule, compiledModule, fakeModule, tempRules } from "./helpers.mjs";

const cuda = { platform: "gpu", platform_version: "cuda 12030", local_hardware_id: 0 };
/** restoreEnv sets $name back to saved, or unsets it where it was unset. */
function restoreEnv(name, saved) {
  if (saved === undefined) delete process.env[name];
  else process.env[name] = saved;
}

const BUILD = /GOOS=wasip1 GOARCH=wasm go build -trimpath -buildmode=c-shared -o .*dlroute\.wasm \.\/wasm/;

describe("a compiler module that cannot serve, given rules to compile: ModuleError, code module_error", () => {
  const cases = [
    ["a missing file", "/nonexistent/dlroute.wasm", /^cannot read the module at \/nonexistent\/dlroute\.wasm: ENOENT$/, BUILD],
    ["bytes that are not WebAssembly", new TextEncoder().encode("#!/bin/sh\necho hello\n"), /^the module is not WebAssembly \(21 bytes\)$/, BUILD],
    ["a truncated module", fakeModule(1, CALLED_EXPORTS).subarray(0, 40), /^the module does not compile: /, undefined],
    ["a module of ABI version 2", fakeModule(2, ["dlroute_abi_version", ...CALLED_EXPORTS]), /^the module has ABI version 2; this host speaks version 1$/, /rebuild the module/],
    ["a module of ABI version 0", fakeModule(0, ["dlroute_abi_version", ...CALLED_EXPORTS]), /^the module has ABI version 0; this host speaks version 1$/, /rebuild the module/],
    ["a version-1 module without the exports this host calls", fakeModule(1, ["dlroute_abi_version"]), /^the module does not export dlroute_alloc, .*dlroute_exchange: it is not a dlroute module of ABI version 1$/, undefined],
    ["a WebAssembly module that is not dlroute's", fakeModule(1, []), /^the module does not export dlroute_abi_version: it is not a dlroute module$/, BUILD],
    ["a module whose exports answer an i32 where ABI.md says i64", fakeModule(1, ["dlroute_abi_version", ...CALLED_EXPORTS]), /^the module trapped in dlroute_load: /, /fresh instance/],
    ["a module that traps", fakeModule(1, ["dlroute_abi_version", ...CALLED_EXPORTS], ["dlroute_load"]), /^the module trapped in dlroute_load: unreachable$/, /fresh instance/],
  ];
  for (const [name, module, message, hint] of cases) {
    test(name, async () => {
      await assert.rejects(load({ module, rules: RULES }), (err) => {
        assert.ok(err instanceof ModuleError, `${err} is not a ModuleError`);
        assert.equal(err.code, "module_error");
        assert.match(err.message, message);
        if (hint) assert.match(err.hint, hint);
        return true;
      });
    });
  }

  test("no module given and $DLROUTE_WASM unset: the one beside the package, or an error that says how to build it", async () => {
    const saved = process.env.DLROUTE_WASM;
    delete process.env.DLROUTE_WASM;
    try {
      if (existsSync(DEFAULT_MODULE)) {
        assert.equal((await load({ rules: RULES })).ruleset("jax").ref, "jax@v3"); // README.md's build put one there
      } else {
        await assert.rejects(load({ rules: RULES }), (err) => err.code === "module_error" && /^no module was given, \$DLROUTE_WASM is unset, and there is none at .*dlroute\.wasm: ENOENT$/.test(err.message) && BUILD.test(err.hint));
      }
    } finally {
      restoreEnv("DLROUTE_WASM", saved);
    }
  });
});

describe("the embedded rules need no compiler module until a call needs what plans lack", () => {
  test("load, decide and explain with a compiler module that does not exist; a description then says so", async () => {
    const engine = await load({ module: "/nonexistent/dlroute.wasm" });
    assert.equal(engine.ruleset("jax").resolve(cuda).device_type, "kDLCUDA");
    assert.equal(engine.ruleset("torch@v1").ref, "torch@v1");
    assert.equal(engine.ruleset("jax").explain(cuda).decision.rule, "gpu");
    assert.throws(() => engine.ruleset("jax").inputs, { name: "ModuleError", message: "cannot read the module at /nonexistent/dlroute.wasm: ENOENT" });
    assert.equal(engine.ruleset("jax").resolve(cuda).device_type, "kDLCUDA", "the decisions go on");
  });

  test("the compiler module is compiled at the first call that needs it, once", async () => {
    const engine = await load({ module: MODULE_PATH });
    const jax = engine.ruleset("jax");
    assert.deepEqual(jax.rules.slice(0, 2), ["sharded", "cpu"]);
    assert.equal(engine.ruleset("exchange").inputs.length, 9);
  });
});

describe("a decision module that cannot serve: ModuleError at load, code module_error", () => {
  const DECISION_EXPORTS = ["dlroute_abi_version", "dlroute_alloc", "dlroute_free", "dlroute_load_plan", "dlroute_decide", "dlroute_explain", "dlroute_release"];
  const DECISION_BUILD = /^use the one checked in at wasm\/decision\/decision\.wasm, or rebuild it from the repository root with go generate \.\/wasm\/decision \(clang, lld, wasi-libc and libclang-rt-14-dev-wasm32 from Debian\)$/;
  const cases = [
    ["a missing file", "/nonexistent/decision.wasm", /^cannot read the module at \/nonexistent\/decision\.wasm: ENOENT$/, DECISION_BUILD],
    ["bytes that are not WebAssembly", "/etc/hostname", /^the module is not WebAssembly \(\d+ bytes\)$/, DECISION_BUILD],
    ["the compiler module in its place", MODULE_PATH, /^the decision module does not export dlroute_load_plan, dlroute_decide, dlroute_explain: it is not dlroute's decision module$/, DECISION_BUILD],
    ["a decision module of ABI version 1", fakeModule(1, DECISION_EXPORTS), /^the decision module has ABI version 1; this host speaks version 3$/, DECISION_BUILD],
    ["a decision module of ABI version 2, which imports nothing", fakeModule(2, DECISION_EXPORTS), /^the decision module has ABI version 2; this host speaks version 3$/, DECISION_BUILD],
  ];
  for (const [name, module, message, hint] of cases) {
    test(name, async () => {
      const saved = process.env.DLROUTE_DECISION_WASM;
      let dir;
      if (typeof module === "string") {
        process.env.DLROUTE_DECISION_WASM = module;
      } else {
        dir = await tempRules();
        process.env.DLROUTE_DECISION_WASM = join(dir, "decision.wasm");
        await writeFile(process.env.DLROUTE_DECISION_WASM, module);
      }
      try {
        await assert.rejects(load({ module: await compiledModule() }), (err) => {
          assert.ok(err instanceof ModuleError, `${err} is not a ModuleError`);
          assert.match(err.message, message);
          assert.match(err.hint, hint);
          return true;
        });
      } finally {
        restoreEnv("DLROUTE_DECISION_WASM", saved);
        if (dir) await rm(dir, { recursive: true, force: true });
      }
    });
  }

  test("none named and $DLROUTE_DECISION_WASM unset: the checked-in wasm/decision/decision.wasm", async () => {
    const saved = process.env.DLROUTE_DECISION_WASM;
    delete process.env.DLROUTE_DECISION_WASM;
    try {
      assert.equal(fileURLToPath(DEFAULT_DECISION_MODULE), checkedInDecisionModule());
      const engine = await load({ module: "/nonexistent/dlroute.wasm" });
      assert.equal(engine.ruleset("jax").resolve(cuda).device_type, "kDLCUDA");
    } finally {
      restoreEnv("DLROUTE_DECISION_WASM", saved);
    }
  });

  test("a module that imports anything but its two host functions: refused at load as an older build, with where the checked-in one is", async () => {
    const saved = process.env.DLROUTE_DECISION_WASM;
    const dir = await tempRules();
    try {
      process.env.DLROUTE_DECISION_WASM = join(dir, "decision.wasm");
      await writeFile(process.env.DLROUTE_DECISION_WASM, fakeModule(3, DECISION_EXPORTS, [], [["dlroute_host", "platform_version"], ["wasi_snapshot_preview1", "fd_write"], ["dlroute_host", "resolve"]]));
      await assert.rejects(load({ module: await compiledModule() }), (err) => {
        assert.ok(err instanceof ModuleError, `${err} is not a ModuleError`);
        assert.equal(err.message, "the decision module imports wasi_snapshot_preview1.fd_write and 1 more: it is an older build, and the decision module imports only dlroute_host.platform_version and dlroute_host.copy_to_host");
        assert.match(err.hint, DECISION_BUILD);
        return true;
      });
    } finally {
      restoreEnv("DLROUTE_DECISION_WASM", saved);
      await rm(dir, { recursive: true, force: true });
    }
  });
});

test("options of the wrong kind: a TypeError at load", async () => {
  for (const options of [{ platformVersion: 12030 }, { copyToHost: "slice" }, { memoSize: -1 }, { memoSize: 1.5 }, { module: 7 }]) {
    await assert.rejects(load(options), TypeError, JSON.stringify(options));
  }
});

describe("rules", () => {
  const broken = {};
  let engine, few;
  before(async () => {
    broken.cel = await tempRules({ "jax/v3/rules.yaml": (s) => s.replace("when: shards != 1", "when: shards >> 1") }, FEW);
    few = await tempRules({}, FEW);
    broken.missing = join(broken.cel, "nowhere");
    engine = await load({ module: await compiledModule() });
  });
  after(() => Promise.all([broken.cel, few].map((dir) => rm(dir, { recursive: true, force: true }))));

  test("packRules writes Go's archive for the same directory", async (t) => {
    const goArchive = process.env.DLROUTE_TEST_ARCHIVE;
    if (!goArchive) return t.skip("$DLROUTE_TEST_ARCHIVE is unset (go test ./wasm/node sets it to abi.PackFS of the rules directory)");
    const { readFile } = await import("node:fs/promises");
    assert.deepEqual(await packRules(RULES), new Uint8Array(await readFile(goArchive)));
  });

  test("a rules directory that does not compile: LoadError, every error with its code and position", async () => {
    await assert.rejects(load({ module: await compiledModule(), rules: broken.cel }), (err) => {
      assert.ok(err instanceof LoadError);
      assert.equal(err.code, "load_error");
      assert.equal(err.errors[0].code, "cel_syntax");
      assert.equal(err.errors[0].position.file, `${broken.cel}/jax/v3/rules.yaml`, "named as given, as the Go command's --rules names it");
      assert.equal(err.errors[0].source.trim(), "when: shards >> 1");
      assert.ok(err.message.startsWith(`the rules do not load: ${broken.cel}/jax/v3/rules.yaml:52:19: rule sharded: when: Syntax error:`), err.message);
      assert.equal(err.errors.length, 1, "one typo is one error: no import errors of the versions that import it");
      assert.doesNotMatch(err.message, /\(and \d+ more\)$/);
      return true;
    });
  });

  test("a rules directory that does not exist: LoadError with read_error", async () => {
    await assert.rejects(engine.load(broken.missing), (err) => err instanceof LoadError && err.errors[0].code === "read_error" && /ENOENT/.test(err.errors[0].message));
  });

  test("rules that do not load leave the rules in service", async () => {
    const jax = engine.ruleset("jax");
    await assert.rejects(engine.load(broken.cel), LoadError);
    assert.equal(jax.resolve(cuda).device_type, "kDLCUDA");
    assert.equal(engine.ruleset("jax@v3").resolve(cuda).device_type, "kDLCUDA");
  });

  test("new rules replace the old; a rule set got before must be got again", async () => {
    const marker = await tempRules({ "jax/v3/rules.yaml": (s) => s.replace(/(\n(\s*)- \{marker: cuda,)/, "\n$2- {marker: nvfork, device: kDLCUDA, pinned_host: kDLCUDAHost}$1") }, FEW);
    try {
      const old = engine.ruleset("jax");
      await engine.load(marker);
      assert.throws(() => old.resolve(cuda), { code: "no_ruleset", message: "the rules were reloaded; get jax@v3 again" });
      assert.equal(engine.ruleset("jax").resolve({ ...cuda, platform_version: "nvfork 1.0" }).device_type, "kDLCUDA");
      await engine.load(few);
      assert.equal(engine.ruleset("jax").resolve({ ...cuda, platform_version: "nvfork 1.0" }).rule, "gpu-unknown-platform");
    } finally {
      await rm(marker, { recursive: true, force: true });
    }
  });

  test("an archive in place of a directory", async () => {
    await engine.load(await packRules(few));
    assert.equal(engine.ruleset("exchange@v1").ref, "exchange@v1");
  });
});
