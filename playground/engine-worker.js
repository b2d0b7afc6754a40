// The compiler module's Web Worker: it fetches, compiles and runs the
// module (engine.js), so that no keystroke, scroll or paint of the page
// waits on a load, a test or the module's start. The page talks to it
// through worker.js: each message is one Engine call, answered in order.
//
//	{id, op: "start", args: [url]}   compile (streaming) and start the module
//	{id, op: "module"}               the compiled module, to start a second worker with
//	{id, op: "adopt", args: [module]} start a module another worker compiled
//	{id, op, args}                   an Engine method: load, ruleset, explainJSON, ...
//	-> {id, value, ms} or {id, error: {name, message}, ms}
//
// ms is how long the call took in the worker, for the page's measures
// (the rest of a call's time is its messages, and waiting its turn).
// A Result (engine.js) crosses as {status, text}. The start's answer says
// when the worker's script ran, when the module was asked for, began to
// arrive, arrived, was compiled and started, in the worker's clock made
// the page's (performance.timeOrigin), and how the module came over the
// network: the page's status line and measures read them. The decision
// module runs on the page's main thread instead (first.js).

let Engine, Result; // engine.js's, once this worker runs the compiler module
let engine = null;
const started = performance.now(); // the worker's script running, for the page's marks

const print = (fd, line) => (fd === 2 ? console.error : console.log)(`dlroute.wasm: ${line}`);

// at is a mark of the worker's timeline in milliseconds since epoch, so
// that the page can place it on its own.
const at = (name) => {
  const e = performance.getEntriesByName(name)[0];
  return e ? performance.timeOrigin + e.startTime : undefined;
};

async function call(op, args) {
  if (op === "start" || op === "adopt") ({ Engine, Result } = await import("./engine.js"));
  if (op === "start") {
    engine = await Engine.instantiate(args[0], print);
    return startAnswer(args[0]);
  }
  // The second instance, for the work that waits for the typing to pause
  // (worker.js, Engine.adopt): the module the first worker compiled,
  // handed over as it is.
  if (op === "module") return engine.module;
  if (op === "adopt") {
    engine = new Engine(args[0], print);
    await engine.restart();
    return { canDiff: engine.canDiff };
  }
  if (op === "restart") {
    await engine.restart();
    return null;
  }
  if (op === "memoryBytes") return engine.memoryBytes;
  const r = engine[op](...args);
  if (r instanceof Result) return { status: r.status, text: r.text };
  if (r?.error instanceof Result) return { error: { status: r.error.status, text: r.error.text } };
  return r ?? null;
}

// startAnswer is a start's answer: when this worker's module (at url,
// where the worker fetched it) was asked for, arrived, was compiled and
// started, and how it came.
function startAnswer(url) {
  const name = url && "/" + url.split("/").pop();
  const wasm = name && performance.getEntriesByType("resource").find((e) => e.name.endsWith(name));
  const from = (ms) => ms && performance.timeOrigin + ms;
  return {
    canDiff: engine?.canDiff ?? false,
    marks: {
      worker: performance.timeOrigin + started,
      "wasm-request": from(wasm?.requestStart),
      "wasm-response": from(wasm?.responseStart),
      "wasm-fetched": from(wasm?.responseEnd),
      compiled: at("dlroute:compiled"),
      initialized: at("dlroute:initialized"),
    },
    wasm: wasm && { transferSize: wasm.transferSize, encodedBodySize: wasm.encodedBodySize, decodedBodySize: wasm.decodedBodySize, name: wasm.name },
  };
}

// Each message waits for the one before it to be answered: a call the
// page sends while the module starts (worker.js Engine.of) runs once it
// has started.
let turn = Promise.resolve();
self.onmessage = ({ data }) => {
  turn = turn.then(() => answer(data));
};

async function answer({ id, op, args }) {
  const t0 = performance.now();
  try {
    const value = await call(op, args);
    self.postMessage({ id, value, ms: performance.now() - t0 });
  } catch (e) {
    self.postMessage({ id, error: { name: e?.name ?? "Error", message: e?.message ?? String(e) }, ms: performance.now() - t0 });
  }
}
