// The page's first script, a classic one run as the head is read: it
// starts the engine's worker (engine-worker.js), which fetches and
// compiles the module while the page's own modules load. app.js takes the
// worker, and the promise of the start's answer, from window.dlrouteBoot.
(() => {
  const worker = new Worker("engine-worker.js", { type: "module" });
  const started = new Promise((resolve) => {
    worker.addEventListener("message", function first(e) {
      if (e.data.id !== 0) return;
      worker.removeEventListener("message", first);
      resolve(e.data);
    });
    worker.addEventListener("error", (e) => resolve({ id: 0, error: { name: "Error", message: `the engine's worker did not start: ${e.message || "it did not load"}` } }), { once: true });
  });
  worker.postMessage({ id: 0, op: "start", args: ["dlroute.wasm"] });
  window.dlrouteBoot = { worker, started };
})();
