// The page's first decision, made on its main thread before the page's
// other modules, plans.bin and rules.json have arrived. index.html runs
// this module first (async), with decision.wasm, first.json and
// plans.bin preloaded ahead of the rest: it compiles the decision module
// as it arrives and, where the page opens on its first case (no link to
// a state, no ?ruleset=), starts it with first.json's set (that case's
// version alone), explains the case and draws the decision; then it
// gives the module the whole of plans.bin. app.js decides with the same
// plans until the compiler module has started, and takes the decision
// drawn here as its first (takeFirst), where it is of the state the page
// opens in (playground/RATIONALE.md, "Why does the page decide its first
// case on its main thread?").

import { Decisions } from "./plans.js";
import { renderDecision } from "./views.js";
import { markDecision } from "./timings.js";

const print = (fd, line) => (fd === 2 ? console.error : console.log)(`decision.wasm: ${line}`);

async function fetched(url) {
  const resp = await fetch(url);
  if (!resp.ok) throw new Error(`fetching ${url}: ${resp.status} ${resp.statusText}`);
  return resp;
}

let first = null; // the first case, decided and drawn
let taken = false; // app.js has the page: nothing is drawn here after
let settle;

// firstSettled resolves once the first case has been decided and drawn
// here, or will not be.
export const firstSettled = new Promise((ok) => (settle = ok));

// start compiles decision.wasm while it arrives (where the server says
// application/wasm, after the download otherwise, as engine.js does),
// decides the first case with first.json's set where the page opens on
// it, and starts the module with plans.bin.
async function start() {
  const module = fetched("decision.wasm").then(async (resp) => {
    const compiled = (resp.headers.get("Content-Type") || "").startsWith("application/wasm") && WebAssembly.compileStreaming
      ? await WebAssembly.compileStreaming(resp)
      : await WebAssembly.compile(await resp.arrayBuffer());
    performance.mark("dlroute:compiled");
    return compiled;
  });
  const set = fetched("plans.bin").then(async (resp) => [new Uint8Array(await resp.arrayBuffer()), resp.headers.get("ETag") ?? ""]);
  const opens = !location.hash && !new URLSearchParams(location.search).has("ruleset");
  const c = opens ? await fetch("first.json").then((r) => (r.ok ? r.json() : null)).catch(() => null) : null;
  let decisions;
  if (c?.set) {
    decisions = await Decisions.start(await module, Uint8Array.from(atob(c.set), (ch) => ch.charCodeAt(0)), c.plans, print);
    await decideFirst(decisions, c).catch((e) => console.error("the first case was not decided ahead of the page", e));
  }
  settle();
  const [bytes, etag] = await set;
  if (decisions) await decisions.takeSet(bytes, etag);
  else decisions = await Decisions.start(await module, bytes, etag, print);
  const wasm = performance.getEntriesByName(new URL("decision.wasm", location.href).href)[0];
  decisions.wasm = wasm && { transferSize: wasm.transferSize, encodedBodySize: wasm.encodedBodySize, decodedBodySize: wasm.decodedBodySize, name: wasm.name };
  return decisions;
}

// plans resolves with the decision module started with plans.bin
// (plans.js Decisions), and rejects where the site has none (it serves
// the compiler module alone) or it did not start.
export const plans = start();
plans.catch(() => {}).finally(settle);

// decideFirst explains first.json's case c with decisions, started with
// its set, and draws the decision.
async function decideFirst(decisions, c) {
  const at = performance.now();
  const answer = await decisions.explain(c.ref, c.input);
  const explained = performance.now();
  if (!answer.ok || taken) return;
  const root = await element("decision");
  if (taken || !root) return;
  const explanation = answer.json();
  renderDecision(root, { explanation, ms: explained - at, onRule: () => {} });
  const parts = { waited: 0, rules: 0, explain: explained - at, worker: explained - at, decide: explained - at, show: performance.now() - explained, paint: 0 };
  markDecision({ timings: { edits: [] } }, { at, kind: "other" }, parts);
  first = { ref: c.ref, input: c.input, etag: c.plans, explanation, parts };
}

// element is the page's element of that test id, once the document has
// been read that far.
async function element(testid) {
  const find = () => document.querySelector(`[data-testid="${testid}"]`);
  while (!find() && document.readyState === "loading") {
    await new Promise((ok) => document.addEventListener("readystatechange", ok, { once: true }));
  }
  return find();
}

// takeFirst hands the page to app.js: it answers the first case decided
// and drawn here ({ref, input, etag, explanation, parts}), or null where
// none was, and none is drawn here after.
export function takeFirst() {
  taken = true;
  return first;
}
