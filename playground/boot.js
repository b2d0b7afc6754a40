// The page's first script, a classic one run as the head is read. It
// takes decision.wasm and plans.bin, which index.html preloads ahead of
// the page's own modules, compiles the module as it arrives, and starts
// the decision module's worker (engine-worker.js, "plans") with them:
// the worker's own scripts load beside the page's, and it only has to
// start the compiled module (playground/RATIONALE.md, "Why does the page
// compile the decision module, not its worker?"). app.js takes the
// worker, and the promise of its start's answer, from
// window.dlrouteBoot.plans; window.dlrouteBoot.start starts another
// worker the same way (the compiler module's, which fetches its own
// module, when the page needs it).
(() => {
  // start starts a worker and asks it op with args, or with what the
  // promise args resolves to; its answer, or the reason it did not start,
  // resolves started, and posted resolves once the worker has been asked
  // (worker.js sends no call before).
  const start = (op, args) => {
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
  };

  const fetched = async (url) => {
    const resp = await fetch(url);
    if (!resp.ok) throw new Error(`fetching ${url}: ${resp.status} ${resp.statusText}`);
    return resp;
  };
  // The module compiles while it arrives where the server says
  // application/wasm, after the download otherwise (as engine.js does).
  let compiledAt;
  const module = fetched("decision.wasm").then(async (resp) => {
    const compiled = (resp.headers.get("Content-Type") || "").startsWith("application/wasm") && WebAssembly.compileStreaming
      ? await WebAssembly.compileStreaming(resp)
      : await WebAssembly.compile(await resp.arrayBuffer());
    compiledAt = performance.now();
    return compiled;
  });
  const plans = fetched("plans.bin").then(async (resp) => [new Uint8Array(await resp.arrayBuffer()), resp.headers.get("ETag") ?? ""]);
  const decision = start("plans", Promise.all([module, plans]).then(([m, [bytes, etag]]) => [m, bytes, etag]));

  // The worker did not fetch the module: its marks and how it came over
  // the network are the page's own (worker.js Engine.start reads both).
  const page = (ms) => ms && performance.timeOrigin + ms;
  decision.started = decision.started.then((answer) => {
    if (!answer.value) return answer;
    const wasm = performance.getEntriesByName(new URL("decision.wasm", location.href).href)[0];
    Object.assign(answer.value.marks, {
      "wasm-request": page(wasm?.requestStart), "wasm-response": page(wasm?.responseStart), "wasm-fetched": page(wasm?.responseEnd),
      compiled: page(compiledAt),
    });
    answer.value.wasm = wasm && { transferSize: wasm.transferSize, encodedBodySize: wasm.encodedBodySize, decodedBodySize: wasm.decodedBodySize, name: wasm.name };
    return answer;
  });
  window.dlrouteBoot = { start, plans: decision };
})();
