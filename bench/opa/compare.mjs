// compare.mjs measures OPA's compiled policy of jax@v3's decision
// (jax.rego, built to build/policy.wasm) beside dlroute's decision module
// (the checked-in wasm/decision/decision.wasm, or the one
// $DLROUTE_DECISION_WASM names, with rules/plans.bin), in Node.js, each in fresh
// processes, and checks that the two decide alike. README.md says how to
// build and run it.
//
//	node bench/opa/compare.mjs build         builds the policy into build/
//	node bench/opa/compare.mjs check         OPA's answer beside dlroute's for every
//	                                         jax@v3 tests.yaml case and an input grid
//	node bench/opa/compare.mjs [RUNS]        RUNS fresh processes of each (default 10),
//	                                         alternated; prints the sizes and a table
//	node bench/opa/compare.mjs --child ENGINE   one process's figures, as JSON

import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { loadavg } from "node:os";
import { dirname, join } from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import zlib from "node:zlib";

const begin = performance.now();
const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, "..", "..");
const build = join(here, "build");
const files = {
  policy: join(build, "policy.wasm"),
  decision: process.env.DLROUTE_DECISION_WASM || join(root, "wasm", "decision", "decision.wasm"),
  plans: join(root, "rules", "plans.bin"),
  tests: join(root, "rules", "jax", "v3", "tests.yaml"),
};
const npm = createRequire(join(here, "_npm", "package.json"));

// N is how many distinct inputs, and how many repeats of one, a process
// decides after its first decision.
const N = 10000;
const firstLine = `{"platform":"gpu","platform_version":"cuda 12030","local_hardware_id":0}`;
const encoder = new TextEncoder();

// engines: how each is loaded, and its one call from a JSON line to its
// answer, both as the library offers them: OPA's evaluate takes the line's
// bytes (or a value it stringifies) and returns the result set as a value;
// dlroute's decide takes the line and returns the answer's JSON text.
const engines = {
  async opa() {
    const { loadPolicy } = npm("@open-policy-agent/opa-wasm");
    const policy = await loadPolicy(readFileSync(files.policy));
    return {
      decide: (line) => policy.evaluate(encoder.encode(line).buffer)[0]?.result,
      decideValue: (value) => policy.evaluate(value)[0]?.result,
    };
  },
  async dlroute() {
    const { Decider } = await import("../../wasm/decision/decision.mjs");
    const d = new Decider(readFileSync(files.decision), readFileSync(files.plans), "jax@v3");
    return {
      decide: (line) => d.decide(line).text,
      decideValue: (value) => JSON.parse(d.decide(JSON.stringify(value)).text),
    };
  },
};

const [mode, arg] = process.argv.slice(2);
if (mode === "--child") await child(arg);
else if (mode === "build") buildModules();
else if (mode === "check") await check();
else await compare(Number(mode ?? 10));

// child prints one fresh process's figures: ms from the process's start
// and from the script's start to the first decision; µs per decision of
// the first N distinct inputs after it (unknown GPU platforms: every one a
// miss for any memo; the engine's code is still being optimized by V8),
// of the next N distinct inputs, of one input N times, and of N distinct
// inputs given and answered as JavaScript values, in that order.
async function child(name) {
  const e = await engines[name]();
  const first = e.decide(firstLine);
  const firstAt = performance.now();
  if (!first) throw new Error(`${name}: no first decision`);
  const lines = [];
  const later = [];
  const values = [];
  for (let i = 0; i < N; i++) {
    lines.push(firstLine.replace("cuda 12030", `fork ${i}`));
    later.push(firstLine.replace("cuda 12030", `later ${i}`));
    values.push({ platform: "gpu", platform_version: `other ${i}`, local_hardware_id: 0 });
  }
  const perCall = (f, xs) => {
    const t0 = performance.now();
    for (const x of xs) f(x);
    return ((performance.now() - t0) * 1000) / xs.length;
  };
  const out = {
    since_start_ms: firstAt,
    load_to_first_ms: firstAt - begin,
    new_input_us: perCall(e.decide, lines),
    new_input_later_us: perCall(e.decide, later),
    repeated_us: perCall(e.decide, new Array(N).fill(firstLine)),
    new_value_us: perCall(e.decideValue, values),
  };
  console.log(JSON.stringify(out));
}

// compare runs runs fresh processes of each engine, alternated so that
// both see the same load, and prints the medians (min-max) as a table.
async function compare(runs) {
  need();
  const rows = [
    ["size raw / gzip -9 / brotli -q 11 (bytes)", null],
    ["process start to first decision (ms)", "since_start_ms"],
    ["script start to first decision (ms)", "load_to_first_ms"],
    [`a new input each call: the first ${N} after the first decision (µs)`, "new_input_us"],
    [`a new input each call: the next ${N} (µs)`, "new_input_later_us"],
    ["a repeated input (µs)", "repeated_us"],
    ["a new input as a JS value, answer as a value (µs)", "new_value_us"],
  ];
  const got = { opa: [], dlroute: [] };
  const loadBefore = loadavg();
  for (let i = 0; i < runs; i++) {
    for (const name of Object.keys(got)) {
      const out = execFileSync(process.execPath, ["--no-warnings", fileURLToPath(import.meta.url), "--child", name], { encoding: "utf8" });
      got[name].push(JSON.parse(out));
    }
  }
  const loadAfter = loadavg();
  const sizes = { opa: sizesOf(files.policy), dlroute: sizesOf(files.decision) };
  console.log(`Node ${process.version}, ${runs} fresh processes each; load average ${fmtLoad(loadBefore)} before, ${fmtLoad(loadAfter)} after`);
  console.log(`| | OPA's compiled policy (jax.rego) | dlroute's decision module (jax@v3) |`);
  console.log(`|---|---|---|`);
  for (const [label, key] of rows) {
    const cell = (name) => (key ? spread(got[name].map((r) => r[key])) : sizes[name].map((n) => n.toLocaleString("en-US")).join(" / "));
    console.log(`| ${label} | ${cell("opa")} | ${cell("dlroute")} |`);
  }
}

// check decides every jax@v3 tests.yaml case and a grid of inputs with
// both, and prints each answer that differs; each case's answer is also
// held against tests.yaml's want. It exits 1 on any mismatch.
async function check() {
  need();
  const YAML = npm("yaml");
  const opa = await engines.opa();
  const dlroute = await engines.dlroute();
  const cases = YAML.parse(readFileSync(files.tests, "utf8")).cases;
  let mismatches = 0;
  const differ = (what, a, b) => {
    if (canonical(a) === canonical(b)) return false;
    mismatches++;
    console.log(`${what}\n   OPA ${canonical(a)}\n  dlroute ${canonical(b)}`);
    return true;
  };
  for (const c of cases) {
    const line = JSON.stringify(c.input);
    const theirs = opa.decide(line);
    const ours = JSON.parse(dlroute.decide(line));
    if (differ(`case "${c.name}": decide(${line})`, theirs, ours)) continue;
    const { ruleset, device_type_code, ...answer } = theirs;
    differ(`case "${c.name}": tests.yaml's want`, answer, c.want);
  }
  const grid = inputGrid();
  for (const input of grid) {
    const line = JSON.stringify(input);
    differ(`decide(${line})`, opa.decide(line), JSON.parse(dlroute.decide(line)));
  }
  for (let i = 0; i < N; i++) {
    const line = firstLine.replace("cuda 12030", `fork ${i}`);
    differ(`decide(${line})`, opa.decide(line), JSON.parse(dlroute.decide(line)));
  }
  console.log(`${cases.length} tests.yaml cases, ${grid.length} grid inputs, ${N} unknown platforms: ${mismatches} mismatches`);
  process.exitCode = mismatches === 0 ? 0 : 1;
}

// inputGrid is every combination of a few values of each input, left out
// (undefined) included, so that defaults and nulls are compared too.
function inputGrid() {
  const axes = {
    platform: ["cpu", "gpu", "tpu", "METAL", "cuda", ""],
    platform_version: ["cuda 12030", "rocm 60200", "oneapi 2026.0", "oneapi-on-rocm", "rocm cuda", "CUDA 12030", "<unknown>", "", "PJRT C API\ncuda 12030"],
    memory_kind: [undefined, null, "device", "pinned_host", "unpinned_host"],
    local_hardware_id: [undefined, null, 0, 3],
    shards: [undefined, 0, 1, 2],
  };
  let inputs = [{}];
  for (const [name, values] of Object.entries(axes)) {
    inputs = inputs.flatMap((input) => values.map((v) => (v === undefined ? input : { ...input, [name]: v })));
  }
  return inputs;
}

// buildModules builds policy.wasm with opa (build/opa, else on PATH); the
// decision module is checked in (`go generate ./wasm/decision` rebuilds it).
function buildModules() {
  const opa = existsSync(join(build, "opa")) ? join(build, "opa") : "opa";
  const bundle = join(build, "bundle.tar.gz");
  run(opa, ["build", "-t", "wasm", "-e", "jax/decision", "-o", bundle, join(here, "jax.rego")]);
  run("tar", ["-xzf", bundle, "-C", build, "/policy.wasm"]);
  for (const f of [files.policy, files.decision]) console.log(`${f}: ${sizesOf(f).join(" / ")} bytes raw / gzip -9 / brotli -q 11`);
}

function run(cmd, args) {
  const r = spawnSync(cmd, args, { cwd: root, stdio: "inherit" });
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(" ")}: ${r.error?.message ?? `exit status ${r.status}`}`);
}

function need() {
  for (const [what, f] of Object.entries(files)) {
    if (!existsSync(f)) {
      const how = what === "decision" ? "it is checked in; go generate ./wasm/decision rebuilds it" : "run `node bench/opa/compare.mjs build` first (README.md)";
      throw new Error(`no ${what} at ${f}: ${how}`);
    }
  }
}

// sizesOf is a file's size raw, by `gzip -9` and by Node's zlib brotli
// at quality 11, window 24 (the brotli CLI's -q 11), as BENCHMARKS.md
// measured the decision module.
function sizesOf(path) {
  const raw = readFileSync(path);
  const brotli = zlib.brotliCompressSync(raw, {
    params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 11, [zlib.constants.BROTLI_PARAM_LGWIN]: 24 },
  });
  const gzip = execFileSync("gzip", ["-9", "-c", path], { maxBuffer: 1 << 30 });
  return [raw.length, gzip.length, brotli.length];
}

// spread is the median and the range of xs.
function spread(xs) {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
  const f = (x) => x.toFixed(x < 10 ? 2 : 1);
  return `**${f(m)}** (${f(s[0])}-${f(s[s.length - 1])})`;
}

function fmtLoad(l) {
  return l.map((x) => x.toFixed(2)).join(" ");
}

// canonical is JSON with the keys of every object sorted.
function canonical(v) {
  if (Array.isArray(v)) return `[${v.map(canonical).join(",")}]`;
  if (v && typeof v === "object") {
    return `{${Object.keys(v)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical(v[k])}`)
      .join(",")}}`;
  }
  return JSON.stringify(v);
}
