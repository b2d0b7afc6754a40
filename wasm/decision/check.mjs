// check.mjs is run by e2e/node's decision_test.go, with MODULE the
// module the Go hosts embed (decision.wasm beside it, checked in, or the
// one $DLROUTE_DECISION_WASM names): `node check.mjs MODULE PLANS CASES`
// decides every case of CASES (a JSON array of {ref, line, status, want},
// the native engine's answers) with the decision module and prints each
// difference and a summary line; `node check.mjs MODULE PLANS --first REF
// LINE N` prints, as JSON, the milliseconds from the process's start to
// its first decision and the microseconds of each of N new inputs after.

import { readFileSync } from "node:fs";
import { performance } from "node:perf_hooks";

import { Decider } from "./decision.mjs";

const [modulePath, plansPath, mode, ...rest] = process.argv.slice(2);

if (mode === "--first") {
  const [ref, line, n] = rest;
  const begin = performance.now();
  const d = new Decider(readFileSync(modulePath), readFileSync(plansPath), ref);
  const first = d.decide(line);
  const firstAt = performance.now();
  if (first.status !== "ok") throw new Error(`first decision: ${first.status} ${first.text}`);
  const lines = [];
  for (let i = 0; i < Number(n); i++) lines.push(line.replace(/"platform_version":"[^"]*"/, `"platform_version":"fork ${i}"`));
  const t0 = performance.now();
  for (const l of lines) d.decide(l);
  const each = ((performance.now() - t0) * 1000) / lines.length;
  console.log(JSON.stringify({ since_start_ms: firstAt, load_to_first_ms: firstAt - begin, new_input_us: each }));
} else {
  const module = new WebAssembly.Module(readFileSync(modulePath));
  const plans = readFileSync(plansPath);
  const cases = JSON.parse(readFileSync(mode, "utf8"));
  const deciders = new Map();
  let passed = 0;
  let failed = 0;
  for (const c of cases) {
    if (!deciders.has(c.ref)) deciders.set(c.ref, new Decider(module, plans, c.ref));
    const got = deciders.get(c.ref).decide(c.line);
    if (got.status === c.status && got.text === c.want) {
      passed++;
    } else {
      failed++;
      console.log(`${c.ref}: decide(${c.line})\n got ${got.status} ${got.text}\nwant ${c.status} ${c.want}`);
    }
  }
  console.log(`${passed} passed, ${failed} failed`);
}
