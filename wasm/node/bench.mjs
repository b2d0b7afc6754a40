#!/usr/bin/env node
// bench.mjs: the Node.js package's costs beside the Go host's, from one
// script run, for BENCHMARKS.md ("Node.js beside Go"). From the
// repository root, with the module built (README.md):
//
//	node wasm/node/bench.mjs [--count N]
//
// Node: each load in a fresh process (compile, start, rules, the first
// decision), with V8's default tiers and with --liftoff-only; per call, in
// a fresh process, after a warm-up. Go: BenchmarkGoHost in wasmhost,
// measured the same way, run by `go test` from here. Then the whole of a
// short-lived process: 5,000 new lines through resolve.mjs and through
// `dlroute resolve --json --engine wasm`. Medians, with min and max.

import { execFileSync, spawnSync } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";

import { load } from "./index.mjs";
import { DEFAULT_MODULE } from "./engine.mjs";

const SELF = fileURLToPath(import.meta.url);
const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const line = (version) => `{"platform":"gpu","platform_version":"${version}","local_hardware_id":0}`;
const now = () => performance.now();

// In a child: one load, or the per-call figures, as JSON on stdout.
const { values: flags } = parseArgs({ options: { count: { type: "string", default: "5" }, child: { type: "string" } } });
if (flags.child === "load") {
  const t0 = now();
  const engine = await load();
  const t1 = now();
  const jax = engine.ruleset("jax");
  jax.resolveJSON(line("cuda 12030"));
  process.stdout.write(JSON.stringify({ load: t1 - t0, first: now() - t0 }));
  process.exit(0);
}
if (flags.child === "calls") {
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
