// The page's first script, a classic one run as the head is read: it
// starts the decision module's worker (engine-worker.js, "plans"), which
// fetches and compiles decision.wasm and fetches plans.bin while the
// page's own modules load. app.js takes it, and the promise of its
// start's answer, from window.dlrouteBoot.plans; window.dlrouteBoot.start
// starts another worker the same way (the compiler module's, when the
// page needs it).
(() => {
  const start = (op, args) => {
    const worker = new Worker("engine-worker.js", { type: "module" });
    const started = new Promise((resolve) => {
      worker.addEventListener("message", function first(e) {
        if (e.data.id !== 0) return;
        worker.removeEventListener("message", first);
        resolve(e.data);
      });
      worker.addEventListener("error", (e) => resolve({ id: 0, error: { name: "Error", message: `the engine's worker did not start: ${e.message || "it did not load"}` } }), { once: true });
    });
    worker.postMessage({ id: 0, op, args });
    return { worker, started };
  };
  window.dlrouteBoot = { start, plans: start("plans", ["decision.wasm", "plans.bin"]) };
})();
