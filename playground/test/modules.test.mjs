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

test("every module app.js reaches is preloaded, and every preload exists", () => {
  const reached = new Set();
  const stack = ["app.js"];
  while (stack.length) {
    const name = stack.pop();
    for (const dep of imports(name)) if (!reached.has(dep)) reached.add(dep), stack.push(dep);
  }
  const html = read("index.html");
  const preloaded = new Set([...html.matchAll(/<link rel="modulepreload" href="([^"]+)">/g)].map((m) => m[1]));
  assert.ok(html.includes('<script type="module" src="app.js">'));
  assert.deepEqual([...reached].filter((m) => !preloaded.has(m)).sort(), [], "imported but not preloaded");
  assert.deepEqual([...preloaded].filter((m) => !existsSync(where(m))).sort(), [], "preloaded but missing");
  assert.ok(reached.has("state.js") && reached.has("engine.js"), `app.js reaches ${[...reached]}`);
});
