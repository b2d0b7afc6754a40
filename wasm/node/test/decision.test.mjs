// The default engine: the embedded rules decided by the decision module
// with their plans. What plans answer in JavaScript (which version a ref
// names, the platform_version a host fills in) is checked against what
// the compiler module answers for the same call.

import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { copyFile, cp, mkdir, mkdtemp, readdir, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { after, before, describe, test } from "node:test";

import { DEFAULT_PLANS, DlrouteError, load } from "../index.mjs";
import { DECISION_HOST_MODULE, noMachineImports, planInputs, readPlanSet } from "../decision.js";
import { startDecisionInstance } from "../instance.mjs";
import { RULES, checkedInDecisionModule, compiledModule } from "./helpers.mjs";

const cuda = { platform: "gpu", platform_version: "cuda 12030", local_hardware_id: 0 };
const PACKAGE = fileURLToPath(new URL("..", import.meta.url));

describe("refs, resolved from the set of plans as the engine resolves them", () => {
  let engine;
  before(async () => {
    engine = await load({ module: "/nonexistent/dlroute.wasm" }); // none of these reads it
  });

  test("a name is its newest version; name@version is that one", () => {
    assert.equal(engine.ruleset().ref, "jax@v3");
    assert.equal(engine.ruleset("jax-export").ref, "jax-export@v2", "v2 is newer than v0.10");
    assert.equal(engine.ruleset("jax@v1.1").ref, "jax@v1.1");
    assert.equal(engine.ruleset("torch@v2.1").ref, "torch@v2.1");
    assert.equal(engine.ruleset("jax@v1").resolve(cuda).ruleset, "jax@v1");
  });

  test("a ref that names nothing: no_ruleset with the engine's message and hint", () => {
    const cases = [
      ["nope", 'no rule set "nope"', "loaded: array-api-strict, cupy, exchange, jax, jax-export, jax-import, mlx, numpy, onnxruntime, paddle, pyarrow, tensorflow, torch, warp"],
      ["jax@v9", 'rule set jax has no version "v9"', "versions: v0, v1, v1.1, v1.2, v2, v3"],
      ["jax@", 'rule set jax has no version ""', "versions: v0, v1, v1.1, v1.2, v2, v3"],
      ["@v3", 'no rule set ""', "loaded: array-api-strict, cupy, exchange, jax, jax-export, jax-import, mlx, numpy, onnxruntime, paddle, pyarrow, tensorflow, torch, warp"],
      ["ja\tx\u0001é", 'no rule set "ja\\tx\\x01é"', "loaded: array-api-strict, cupy, exchange, jax, jax-export, jax-import, mlx, numpy, onnxruntime, paddle, pyarrow, tensorflow, torch, warp"],
    ];
    for (const [ref, message, hint] of cases) {
      assert.throws(() => engine.ruleset(ref), (err) => err instanceof DlrouteError && err.code === "no_ruleset" && err.message === message && err.hint === hint, ref);
    }
  });
});

describe("a release ref needs the manifests: the compiler module answers which version, the plan decides", () => {
  let engine;
  before(async () => {
    engine = await load({ module: await compiledModule() });
  });

  test("jax==0.10.2 is the version checked against it", () => {
    const rs = engine.ruleset("jax==0.10.2");
    assert.equal(rs.ref, "jax@v1.1");
    assert.equal(rs.resolve(cuda).ruleset, "jax@v1.1");
  });

  test("a release no version was checked against: unchecked_release", () => {
    assert.throws(() => engine.ruleset("jax==99.0"), { code: "unchecked_release" });
  });
});

test("every embedded version that declares platform_version requires it: a plan is asked of the host only after missing_field", () => {
  const set = readPlanSet(readFileSync(DEFAULT_PLANS));
  assert.ok(set.size >= 28, `${set.size} plans`);
  let declaring = 0;
  for (const [ref, plan] of set) {
    const pv = planInputs(plan).find((i) => i.name === "platform_version");
    if (pv === undefined) continue;
    declaring++;
    assert.equal(pv.required, true, `${ref} declares platform_version with a default`);
  }
  assert.ok(declaring > 0);
});

test("the module's host functions answer as a host that reads no machine: a line without platform_version is missing_field", () => {
  const module = new WebAssembly.Module(readFileSync(checkedInDecisionModule()));
  const imported = WebAssembly.Module.imports(module).map((i) => `${i.module}.${i.name}:${i.kind}`).sort();
  assert.deepEqual(imported, [`${DECISION_HOST_MODULE}.copy_to_host:function`, `${DECISION_HOST_MODULE}.platform_version:function`]);
  assert.equal(noMachineImports()[DECISION_HOST_MODULE].platform_version(0, 0, 0, 0), 2);
  assert.equal(noMachineImports()[DECISION_HOST_MODULE].copy_to_host(0, 0), 2);
  const client = startDecisionInstance(module);
  const set = readPlanSet(readFileSync(DEFAULT_PLANS));
  const { handle } = client.loadPlan(set.get("jax@v3"));
  const r = client.decide(handle, '{"platform":"gpu","local_hardware_id":1}');
  assert.equal(r.status, "input_error");
  assert.equal(JSON.parse(r.text).code, "missing_field");
});

describe("platform_version from the host: the plans' answers are the compiler module's", () => {
  let jaxRules;
  let answer = () => undefined;
  const options = { platformVersion: (device) => answer(device) };
  const engines = {};
  before(async () => {
    // The compiler module compiles these rules (jax alone, to be quick);
    // the default engine decides the same versions with their plans.
    jaxRules = await mkdtemp(join(tmpdir(), "dlroute-jax-"));
    await cp(join(RULES, "jax"), join(jaxRules, "jax"), { recursive: true });
    engines.plans = await load({ ...options, module: await compiledModule() });
    engines.compiler = await load({ ...options, module: await compiledModule(), rules: jaxRules });
  });
  after(() => rm(jaxRules, { recursive: true, force: true }));

  const outcome = (ruleset, line) => {
    try {
      return ruleset.resolveJSON(line);
    } catch (err) {
      return `${err.name} ${err.code}: ${err.message}`;
    }
  };
  const lines = [
    '{"platform":"gpu","local_hardware_id":1}',
    '{"platform":"gpu","local_hardware_id":null,"memory_kind":"pinned_host"}',
    '{"platform":"gpu","local_hardware_id":1.9}',
    '{"platform":"gpu","local_hardware_id":-1}',
    '{"platform":"gpu","local_hardware_id":4294967297}',
    '{"platform":"gpu","local_hardware_id":"1"}',
    '{"local_hardware_id":2}',
    " { } ",
    "{}",
    "[]",
    "{",
    '{"platform":"gpu","platform_version":null}',
    '{"platform":"tpu","local_hardware_id":0,"colour":"red"}',
  ];
  const hosts = [
    ["a version for each device", (device) => (device === 1 ? "rocm 60200" : `cuda ${device}`)],
    ["no answer", () => undefined],
    ["a callback that throws", () => {
      throw new Error("no driver");
    }],
    ["a number, not a string", () => 12030],
    ["a version with quotes and a newline", () => 'PJRT C API\n"cuda" 12030'],
  ];
  test("explain: the plan's explanations are the compiler module's, byte for byte", () => {
    answer = (device) => `rocm ${device}`;
    const explainLines = [...lines, JSON.stringify(cuda), '{"platform":"gpu","platform_version":"<unknown>","local_hardware_id":0,"shards":2}'];
    for (const ref of ["jax@v3", "jax@v1.2", "jax@v0"]) {
      const [plans, compiler] = [engines.plans.ruleset(ref), engines.compiler.ruleset(ref)];
      for (const line of explainLines) {
        const explain = (rs) => {
          try {
            return JSON.stringify(rs.explain(JSON.parse(line)));
          } catch (err) {
            return `${err.name} ${err.code}: ${err.message}`;
          }
        };
        assert.equal(explain(plans), explain(compiler), `${ref}: ${line}`);
      }
    }
  });

  for (const [name, host] of hosts) {
    test(name, () => {
      answer = host;
      for (const ref of ["jax@v3", "jax@v0"]) {
        const [plans, compiler] = [engines.plans.ruleset(ref), engines.compiler.ruleset(ref)];
        for (const line of lines) assert.equal(outcome(plans, line), outcome(compiler, line), `${ref}: ${line}`);
      }
    });
  }
});

describe("plans the package cannot use: a ModuleError that says how to make them", () => {
  // A copy of the package, with rules/plans.bin two levels up and the
  // checked-in decision module beside it as in the repository, so that its
  // default plans are the test's.
  let root;
  before(async () => {
    root = await mkdtemp(join(tmpdir(), "dlroute-plans-"));
    await mkdir(join(root, "wasm", "node"), { recursive: true });
    await mkdir(join(root, "rules"));
    await mkdir(join(root, "wasm", "decision"));
    await copyFile(checkedInDecisionModule(), join(root, "wasm", "decision", "decision.wasm"));
    for (const f of await readdir(PACKAGE)) {
      if (/\.m?js$/.test(f)) await copyFile(join(PACKAGE, f), join(root, "wasm", "node", f));
    }
  });
  after(() => rm(root, { recursive: true, force: true }));

  const decide = () => {
    const script = `import { load } from ${JSON.stringify(join(root, "wasm", "node", "index.mjs"))};
      try { console.log((await load()).ruleset("jax").resolveJSON('{"platform":"cpu","platform_version":""}')); }
      catch (err) { console.log(JSON.stringify({ name: err.name, message: err.message, hint: err.hint })); }`;
    return JSON.parse(spawnSync(process.execPath, ["--input-type=module", "-e", script], { encoding: "utf8" }).stdout);
  };

  test("no rules/plans.bin", async () => {
    await rm(join(root, "rules", "plans.bin"), { force: true });
    const err = decide();
    assert.equal(err.name, "ModuleError");
    assert.match(err.message, /^cannot read the embedded rules' plans at .*\/rules\/plans\.bin: ENOENT$/);
    assert.equal(err.hint, "make them with go generate ./rules");
  });

  test("a plan of a format version the module does not read", async () => {
    const set = readPlanSet(readFileSync(DEFAULT_PLANS));
    set.set("jax@v3", new Uint8Array([...new TextEncoder().encode("DLPLAN"), 99]));
    await writeFile(join(root, "rules", "plans.bin"), encodeSet(set));
    const err = decide();
    assert.equal(err.name, "ModuleError");
    assert.match(err.message, /^the plan of jax@v3 does not load: plan format version 99; this evaluator reads version \d+$/);
    assert.equal(err.hint, "make the plans and the decision module from the same source: go generate ./rules ./wasm/decision");
    set.delete("jax@v3");
    await writeFile(join(root, "rules", "plans.bin"), encodeSet(set));
    assert.deepEqual(decide(), { device_type: "kDLCPU", device_type_code: 1, device_id: 0, rule: "cpu", ruleset: "jax@v2" }, "the other plans serve");
  });
});

/** encodeSet writes plans (a Map from ref to bytes) as Go's plan.EncodeSet, in the Map's order. */
function encodeSet(plans) {
  const uvarint = (n) => {
    const out = [];
    for (; n >= 0x80; n = Math.floor(n / 128)) out.push((n % 128) | 0x80);
    out.push(n);
    return out;
  };
  const bytes = [...new TextEncoder().encode("DLPLANSET"), ...uvarint(1), ...uvarint(plans.size)];
  for (const [ref, plan] of plans) {
    const r = new TextEncoder().encode(ref);
    bytes.push(...uvarint(r.length), ...r, ...uvarint(plan.length), ...plan);
  }
  return new Uint8Array(bytes);
}

describe("the memo: answers remembered by line", () => {
  const asked = [];
  const options = { platformVersion: (device) => (asked.push(device), "cuda 12030") };
  const gpu = '{"platform":"gpu","local_hardware_id":0}'; // asks the host for platform_version
  const other = (i) => `{"platform":"gpu","platform_version":"fork ${i}","local_hardware_id":0}`;

  test("a line read again and again stays remembered while many new lines stream by", async () => {
    const jax = (await load({ ...options, memoSize: 8 })).ruleset("jax");
    asked.length = 0;
    const want = jax.resolveJSON(gpu);
    for (let i = 0; i < 200; i++) {
      assert.match(jax.resolveJSON(other(i)), /gpu-unknown-platform/);
      if (i % 3 === 0) assert.equal(jax.resolveJSON(gpu), want);
    }
    assert.deepEqual(asked, [0], "the host was asked once: every later answer was remembered");
  });

  test("a line read once is forgotten after about memoSize new ones; memoSize 0 remembers nothing", async () => {
    const jax = (await load({ ...options, memoSize: 8 })).ruleset("jax");
    asked.length = 0;
    jax.resolveJSON(gpu);
    for (let i = 0; i < 16; i++) jax.resolveJSON(other(i));
    jax.resolveJSON(gpu);
    assert.deepEqual(asked, [0, 0]);
    const none = (await load({ ...options, memoSize: 0 })).ruleset("jax");
    asked.length = 0;
    none.resolveJSON(gpu);
    none.resolveJSON(gpu);
    assert.deepEqual(asked, [0, 0]);
  });
});
