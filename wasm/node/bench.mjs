#!/usr/bin/env node
// bench.mjs: the Node.js package's costs beside the Go host's, from one
// script run, for BENCHMARKS.md ("Node.js beside Go"). From the
// repository root, with the compiler module built (README.md; the
// decision module is checked in):
//
//	node wasm/node/bench.mjs [--count N]
//
// Node: each load in a fresh process (compile, start, rules, the first
// decision), with V8's default tiers and with --liftoff-only; per call, in
// a fresh process, after a warm-up. Go: BenchmarkGoHost in wasmhost,
// measured the same way, run by `go test` from here. Then the whole of a
// short-lived process: 5,000 new lines through resolve.mjs and through
// `dlroute resolve --json --engine wasm`. Medians, with min and max.
//
//	node wasm/node/bench.mjs --opa [--count N] [--baseline DIR]
//
// The package's public API (load, ruleset, resolveJSON, resolve) beside
// OPA's compiled policy of jax@v3 (bench/opa, built as its README says),
// beside the same with its memo off (load({memoSize: 0}), as OPA has
// none), and beside the decision module's bare client (wasm/decision/
// decision.mjs); with --baseline, also the package of DIR, another
// checkout (an earlier commit: git archive C | tar -x -C DIR) with its
// decision module checked in at DIR/wasm/decision/decision.wasm (or, in a
// checkout from before it was, built at DIR/wasm/node/decision.wasm),
// measured by DIR's own bench.mjs. N fresh processes of each, alternated: from the
// process's start and from the script's to the first decision (imports
// included; and the process's CPU time to it), then per call: 10,000 new
// inputs, 10,000 more, the CPU time of 10,000 more, one input 10,000
// times, and 10,000 new inputs as JavaScript values. The package
// reads $DLROUTE_DECISION_WASM, or the checked-in
// wasm/decision/decision.wasm; the bare client reads the same file.

import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, writeFileSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";

// Only Node's own modules are imported here: a child of --opa imports
// the engine it measures after its clock starts.

const SELF = fileURLToPath(import.meta.url);
const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const line = (version) => `{"platform":"gpu","platform_version":"${version}","local_hardware_id":0}`;
const now = () => performance.now();

// In a child: one load, or the per-call figures, as JSON on stdout.
const { values: flags } = parseArgs({ options: { count: { type: "string", default: "5" }, child: { type: "string" }, opa: { type: "boolean" }, baseline: { type: "string" } } });
if (flags.child?.startsWith("opa:")) {
  await opaChild(flags.child.slice(4));
  process.exit(0);
}
if (flags.opa) {
  opaCompare(Number(flags.count), flags.baseline);
  process.exit(0);
}
if (flags.child === "load") {
  const { load } = await import("./index.mjs");
  const t0 = now();
  const engine = await load();
  const t1 = now();
  const jax = engine.ruleset("jax");
  jax.resolveJSON(line("cuda 12030"));
  process.stdout.write(JSON.stringify({ load: t1 - t0, first: now() - t0 }));
  process.exit(0);
}
if (flags.child === "calls") {
  const { load } = await import("./index.mjs");
  const jax = (await load()).ruleset("jax");
  const per = (n, f) => {
    const t = now();
    for (let i = 0; i < n; i++) f(i);
    return ((now() - t) * 1e6) / n; // ns
  };
  const input = { platform: "gpu", platform_version: "PJRT C API\ncuda 12030", memory_kind: "device", local_hardware_id: 1 };
  per(2000, (i) => jax.resolveJSON(line(`warm ${i}`)));
  process.stdout.write(
    JSON.stringify({
      "resolve-json/repeated": per(200_000, () => jax.resolveJSON(line("cuda 12030"))),
      "resolve-json/unique": per(2000, (i) => jax.resolveJSON(line(`fork ${i}`))),
      "resolve/repeated": per(200_000, () => jax.resolve(input)),
    }),
  );
  process.exit(0);
}

const count = Number(flags.count);
const { DEFAULT_MODULE } = await import("./index.mjs");
const env = { ...process.env, DLROUTE_WASM: process.env.DLROUTE_WASM ?? fileURLToPath(DEFAULT_MODULE) };
const child = (v8flags, what) => JSON.parse(execFileSync(process.execPath, [...v8flags, SELF, "--child", what], { env, encoding: "utf8" }));
const rows = new Map(); // name -> [ms...]
const add = (name, ms) => rows.set(name, [...(rows.get(name) ?? []), ms]);

for (const [tier, v8flags] of [["", []], [" --liftoff-only", ["--liftoff-only"]]]) {
  for (let i = 0; i < count; i++) {
    const r = child(v8flags, "load");
    add(`node${tier}: load()`, r.load);
    add(`node${tier}: load to first decision`, r.first);
    const c = child(v8flags, "calls");
    for (const [k, ns] of Object.entries(c)) add(`node${tier}: ${k}`, ns / 1e6);
  }
}

const bench = (args) => execFileSync("go", ["test", "./wasmhost", "-run", "^$", "-bench", "^BenchmarkGoHost$", "-count", String(count), ...args], { cwd: ROOT, env, encoding: "utf8" });
const goOut = bench(["-benchtime", "3x"]).split("\n").filter((l) => l.includes("/load")).join("\n") + "\n" + bench([]).split("\n").filter((l) => !l.includes("/load")).join("\n");
for (const m of goOut.matchAll(/^BenchmarkGoHost\/(\S+?)-\d+\s+\d+\s+([\d.]+) ns\/op/gm)) {
  add(`go: ${m[1] === "load" ? "load to first decision" : m[1]}`, Number(m[2]) / 1e6);
}

// A short-lived process, whole: 5,000 new lines.
const dir = mkdtempSync(join(tmpdir(), "dlroute-bench-"));
const input = Array.from({ length: 5000 }, (_, i) => line(`fork ${i}`)).join("\n") + "\n";
const dlroute = join(dir, "dlroute");
execFileSync("go", ["build", "-o", dlroute, "./cmd/dlroute"], { cwd: ROOT });
writeFileSync(join(dir, "in.jsonl"), input);
const whole = (name, cmd, args) => {
  for (let i = 0; i < count; i++) {
    const t = now();
    const r = spawnSync(cmd, args, { input, env, maxBuffer: 1 << 28 });
    if (r.status !== 0) throw new Error(`${name}: status ${r.status}: ${r.stderr}`);
    add(`5,000 new lines, whole process: ${name}`, now() - t);
  }
};
whole("node resolve.mjs", process.execPath, [join(ROOT, "wasm/node/resolve.mjs")]);
whole("node --liftoff-only resolve.mjs", process.execPath, ["--liftoff-only", join(ROOT, "wasm/node/resolve.mjs")]);
whole("dlroute resolve --json --engine wasm", dlroute, ["resolve", "--json", "--engine", "wasm"]);
whole("dlroute resolve --json (native)", dlroute, ["resolve", "--json"]);

const fmt = (ms) => (ms >= 100 ? `${ms.toFixed(0)} ms` : ms >= 1 ? `${ms.toFixed(1)} ms` : ms >= 0.001 ? `${(ms * 1000).toFixed(1)} µs` : `${(ms * 1e6).toFixed(0)} ns`);
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)];
console.log(`Node ${process.version}, ${count} runs each; median (min to max)\n`);
console.log("| measure | time |\n|---|---|");
for (const [name, xs] of rows) console.log(`| ${name} | ${fmt(median(xs))} (${fmt(Math.min(...xs))} to ${fmt(Math.max(...xs))}) |`);

// The OPA comparison (--opa): each engine as its library offers it, from
// a JSON line to the answer's JSON text (decide), and from a value to a
// value (decideValue).
// (Functions, not constants: the dispatch at the top runs first.)
function opaDir() {
  return join(ROOT, "bench", "opa");
}
function N() {
  return 10000;
}
function firstLine() {
  return `{"platform":"gpu","platform_version":"cuda 12030","local_hardware_id":0}`;
}
function engines() {
  return {
  async opa() {
    const { createRequire } = await import("node:module");
    const { readFileSync } = await import("node:fs");
    const { loadPolicy } = createRequire(join(opaDir(), "_npm", "package.json"))("@open-policy-agent/opa-wasm");
    const policy = await loadPolicy(readFileSync(join(opaDir(), "build", "policy.wasm")));
    const encoder = new TextEncoder();
    return { decide: (l) => policy.evaluate(encoder.encode(l).buffer)[0]?.result, decideValue: (v) => policy.evaluate(v)[0]?.result };
  },
  async package() {
    const { load } = await import("./index.mjs");
    const jax = (await load()).ruleset("jax@v3");
    return { decide: (l) => jax.resolveJSON(l), decideValue: (v) => jax.resolve(v) };
  },
  async nomemo() {
    const { load } = await import("./index.mjs");
    const jax = (await load({ memoSize: 0 })).ruleset("jax@v3");
    return { decide: (l) => jax.resolveJSON(l), decideValue: (v) => jax.resolve(v) };
  },
  async bare() {
    const { readFileSync } = await import("node:fs");
    const { Decider } = await import("../decision/decision.mjs");
    const path = process.env.DLROUTE_DECISION_WASM ?? fileURLToPath(new URL("../decision/decision.wasm", import.meta.url));
    const d = new Decider(readFileSync(path), readFileSync(join(ROOT, "rules", "plans.bin")), "jax@v3");
    return { decide: (l) => d.decide(l).text, decideValue: (v) => JSON.parse(d.decide(JSON.stringify(v)).text) };
  },
  };
}

async function opaChild(name) {
  const begin = now();
  const e = await engines()[name]();
  const first = e.decide(firstLine());
  const firstAt = now();
  const firstCPU = process.cpuUsage();
  if (!first) throw new Error(`${name}: no first decision`);
  const fresh = (tag) => Array.from({ length: N() }, (_, i) => firstLine().replace("cuda 12030", `${tag} ${i}`));
  const [lines, later] = [fresh("fork"), fresh("later")];
  const values = Array.from({ length: N() }, (_, i) => ({ platform: "gpu", platform_version: `other ${i}`, local_hardware_id: 0 }));
  const perCall = (f, xs) => {
    const t0 = now();
    for (const x of xs) f(x);
    return ((now() - t0) * 1000) / xs.length;
  };
  // CPU time, this process's threads together (V8 compiles in the
  // background): steadier than wall time on a busy machine.
  const cpuPerCall = (f, xs) => {
    const u0 = process.cpuUsage();
    for (const x of xs) f(x);
    const u = process.cpuUsage(u0);
    return (u.user + u.system) / xs.length;
  };
  process.stdout.write(
    JSON.stringify({
      since_start_ms: firstAt,
      load_to_first_ms: firstAt - begin,
      cpu_to_first_ms: (firstCPU.user + firstCPU.system) / 1000,
      new_input_us: perCall(e.decide, lines),
      new_input_later_us: perCall(e.decide, later),
      new_input_cpu_us: cpuPerCall(e.decide, fresh("cpu")),
      repeated_us: perCall(e.decide, new Array(N()).fill(firstLine())),
      new_value_us: perCall(e.decideValue, values),
    }),
  );
}

/** baselineDecision is the decision module of the checkout at dir: checked in, or built beside its package before it was. */
function baselineDecision(dir) {
  const checkedIn = join(dir, "wasm", "decision", "decision.wasm");
  return existsSync(checkedIn) ? checkedIn : join(dir, "wasm", "node", "decision.wasm");
}

function opaCompare(runs, baseline) {
  const rows = [
    ["process start to first decision (ms)", "since_start_ms"],
    ["script start to first decision, imports included (ms)", "load_to_first_ms"],
    ["CPU time, process start to first decision (ms)", "cpu_to_first_ms"],
    [`a new input each call: the first ${N()} after the first decision (µs)`, "new_input_us"],
    [`a new input each call: the next ${N()} (µs)`, "new_input_later_us"],
    [`CPU time of a new input, the ${N()} after those (µs)`, "new_input_cpu_us"],
    [`one input ${N()} times (µs)`, "repeated_us"],
    ["a new input as a JS value, answered as a value (µs)", "new_value_us"],
  ];
  const got = { opa: [], package: [], nomemo: [], bare: [] };
  const columns = ["OPA's compiled policy", "the package: load(), ruleset(), resolveJSON/resolve", "the package, memo off", "the bare client (decision.mjs)"];
  if (baseline !== undefined) {
    got.baseline = [];
    columns.push(`the package of ${baseline}`);
  }
  const before = loadavg();
  for (let i = 0; i < runs; i++) {
    for (const name of Object.keys(got)) {
      const [script, env] =
        name === "baseline"
          ? [join(baseline, "wasm", "node", "bench.mjs"), { ...process.env, DLROUTE_DECISION_WASM: baselineDecision(baseline) }]
          : [SELF, process.env];
      const child = name === "baseline" ? "package" : name;
      got[name].push(JSON.parse(execFileSync(process.execPath, ["--no-warnings", script, "--child", `opa:${child}`], { encoding: "utf8", env })));
    }
  }
  const cell = (xs) => {
    const s = [...xs].sort((a, b) => a - b);
    const f = (x) => x.toFixed(x < 10 ? 2 : 1);
    return `**${f(mid(s))}** (${f(s[0])}-${f(s[s.length - 1])})`;
  };
  const load = (l) => l.map((x) => x.toFixed(2)).join(" ");
  console.log(`Node ${process.version}, ${runs} fresh processes each, alternated; median (min-max); load average ${load(before)} before, ${load(loadavg())} after\n`);
  console.log(`| | ${columns.join(" | ")} |\n|${"---|".repeat(columns.length + 1)}`);
  for (const [label, key] of rows) console.log(`| ${label} | ${Object.values(got).map((rs) => cell(rs.map((r) => r[key]))).join(" | ")} |`);
}

function mid(sorted) {
  const n = sorted.length;
  return n % 2 ? sorted[(n - 1) / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
}
