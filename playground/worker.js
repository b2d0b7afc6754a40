// EngineWorker is the page's side of the compiler module's Web Worker
// (engine-worker.js): the Engine's methods (engine.js), each answered by
// a promise, in the order they were called. The worker starts when the
// page needs the compiler module (app.js wantCompiler, by startWorker);
// the decision module runs on the page's main thread (first.js).

import { Result } from "./engine.js";

// startWorker starts an engine's worker and asks it op with args, or
// with what the promise args resolves to: its answer, or the reason it
// did not start, resolves started, and posted resolves once the worker
// has been asked (Engine.of sends no call before).
export function startWorker(op, args) {
  const worker = new Worker("engine-worker.js", { type: "module" });
  let sent;
  const posted = new Promise((ok) => (sent = ok));
  const started = new Promise((resolve) => {
    const fail = (message) => resolve({ id: 0, error: { name: "Error", message } });
    worker.addEventListener("message", function first(e) {
      if (e.data.id !== 0) return;
      worker.removeEventListener("message", first);
      resolve(e.data);
    });
    worker.addEventListener("error", (e) => fail(`the engine's worker did not start: ${e.message || "it did not load"}`), { once: true });
    Promise.resolve(args).then((a) => worker.postMessage({ id: 0, op, args: a }), (e) => {
      worker.terminate();
      fail(e.message);
    }).finally(sent);
  });
  return { worker, started, posted };
}

export class Engine {
  #worker;
  #next = 1;
  #pending = new Map();
  #posted; // resolves once the worker has its start's message; null after

  // The Engine of a worker; posted, where given, resolves once the
  // worker has been sent its start, before which no call is sent.
  constructor(worker, posted = null) {
    this.#worker = worker;
    this.#posted = posted?.then(() => (this.#posted = null));
    this.canDiff = false;
    this.wasm = undefined; // the module's resource timing, as the worker fetched it
    this.workMs = 0; // the time the worker has spent in calls, for the page's measures
    worker.onmessage = ({ data: { id, value, error, ms } }) => {
      const p = this.#pending.get(id);
      if (!p) return; // the start's answer: startWorker's
      this.#pending.delete(id);
      this.workMs += ms ?? 0;
      if (error) p.reject(Object.assign(new Error(error.message), { name: error.name }));
      else p.resolve(value);
    };
    worker.onerror = (e) => this.#fail(new Error(`the engine's worker failed: ${e.message || "it did not load"}`));
  }

  // #fail rejects every call not answered yet.
  #fail(err) {
    for (const p of this.#pending.values()) p.reject(err);
    this.#pending.clear();
  }

  // start takes a worker startWorker started, and waits for its module to be
  // fetched and started in it; the marks of its compiling and starting
  // go on the page's timeline, their names after prefix.
  static start(started, prefix = "") {
    return Engine.of(started, prefix).started;
  }

  // of is start's Engine at once, before its module has started: calls
  // made on it are sent after the start and answered after it, or fail
  // with it. Its started resolves with it once the module has started.
  static of({ worker, started: answer, posted }, prefix = "") {
    const engine = new Engine(worker, posted);
    engine.started = answer.then(({ value: started, error }) => {
      if (error) {
        const err = Object.assign(new Error(error.message), { name: error.name });
        engine.#fail(err);
        throw err;
      }
      engine.canDiff = started.canDiff;
      engine.wasm = started.wasm;
      for (const [name, ms] of Object.entries(started.marks)) {
        if (ms !== undefined) performance.mark(`dlroute:${prefix}${name}`, { startTime: ms - performance.timeOrigin });
      }
      return engine;
    });
    return engine;
  }

  // adopt starts a second worker with the module this one compiled: the
  // tests and "what changed" run there, so that a key's decision never
  // waits behind them (app.js).
  async adopt() {
    const module = await this.#call("module");
    const engine = new Engine(new Worker("engine-worker.js", { type: "module" }));
    engine.canDiff = (await engine.#call("adopt", module)).canDiff;
    engine.wasm = this.wasm;
    return engine;
  }

  #call(op, ...args) {
    const id = this.#next++;
    return new Promise((resolve, reject) => {
      this.#pending.set(id, { resolve, reject });
      const post = () => this.#worker.postMessage({ id, op, args });
      if (this.#posted) this.#posted.then(post);
      else post();
    });
  }

  async #answer(op, ...args) {
    const r = await this.#call(op, ...args);
    return new Result(r.status, r.text);
  }

  restart() {
    this.#described.clear(); // the new instance numbers its handles afresh
    return this.#call("restart");
  }
  memoryBytes() { return this.#call("memoryBytes"); }
  setParsed(base64) { return this.#call("setParsed", base64); }
  load(files) { return this.#answer("load", files); }
  loadLazy(files) { return this.#answer("loadLazy", files); }
  async ruleset(ref) {
    const r = await this.#call("ruleset", ref);
    return r.error ? { error: new Result(r.error.status, r.error.text) } : r;
  }
  // describe is asked once per handle: what a handle declares does not
  // change, and a decision asks it every time.
  #described = new Map();
  describe(handle) {
    if (!this.#described.has(handle)) this.#described.set(handle, this.#answer("describe", handle));
    return this.#described.get(handle);
  }
  test(handle) { return this.#answer("test", handle); }
  release(handle) {
    this.#described.delete(handle);
    return this.#call("release", handle);
  }
  resolveJSON(handle, line) { return this.#answer("resolveJSON", handle, line); }
  explainJSON(handle, line) { return this.#answer("explainJSON", handle, line); }
  diff(a, b) { return this.#answer("diff", a, b); }
}
