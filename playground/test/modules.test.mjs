// The page's modules as served: every module app.js imports, directly or
// not, is preloaded by index.html (so the browser fetches them at once,
// not one import level at a time), and index.html preloads nothing that
// is not there.

import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import { test } from "node:test";

const dir = new URL("../", import.meta.url);
// The modules the page shares with the Node.js package are that package's
// files, which package playground serves beside these (wasm/node's Shared).
const shared = new URL("../../wasm/node/", import.meta.url);
const where = (name) => (existsSync(new URL(name, dir)) ? new URL(name, dir) : new URL(name, shared));
const read = (name) => readFileSync(where(name), "utf8");

// imports are the relative modules a module imports.
function imports(name) {
  return [...read(name).matchAll(/^\s*(?:import|export)\s[^"']*?from\s+["']\.\/([^"']+)["']/gm)].map((m) => m[1]);
}

// reach is the modules name imports, directly or not.
function reach(name) {
  const reached = new Set();
  const stack = [name];
  while (stack.length) {
    const name = stack.pop();
    for (const dep of imports(name)) if (!reached.has(dep)) reached.add(dep), stack.push(dep);
  }
  return reached;
}

test("every module app.js reaches is preloaded, and every preload exists", () => {
  const reached = reach("app.js");
  const html = read("index.html");
  // A module index.html runs itself (first.js) is asked for as a preload is.
  const preloaded = new Set([...html.matchAll(/<link rel="modulepreload" href="([^"]+)">|<script type="module"[^>]* src="([^"]+)"/g)].map((m) => m[1] ?? m[2]));
  assert.ok(html.includes('<script type="module" src="app.js">'));
  assert.deepEqual([...reached].filter((m) => !preloaded.has(m)).sort(), [], "imported but not preloaded");
  assert.deepEqual([...preloaded].filter((m) => !existsSync(where(m))).sort(), [], "preloaded but missing");
  assert.ok(reached.has("state.js") && reached.has("engine.js"), `app.js reaches ${[...reached]}`);
});

test("the first decision's modules and files are asked for before the page's others", () => {
  const html = read("index.html");
  const first = [...reach("first.js")].sort();
  assert.deepEqual(first, ["plans.js", "timings.js", "views.js", "wasi.js"], "first.js reaches more than the first decision needs");
  const at = (href) => html.search(new RegExp(`(href|src)="${href.replace(".", "\\.")}"`));
  const rest = Math.min(at("style.css"), at("rules.json"), at("app.js"), at("worker.js"));
  for (const name of ["decision.wasm", "plans.bin", "first.json", "first.js", ...first]) {
    assert.ok(at(name) >= 0 && at(name) < rest, `index.html asks for ${name} after the page's other files, or not at all`);
  }
  assert.ok(/<script type="module" async src="first.js"/.test(html), "first.js runs as soon as it has arrived, not after the page's modules");
  assert.ok(!/<script src=/.test(html), "a classic script would hold up the document and first.js");
});
