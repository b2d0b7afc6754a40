// Fakes of the engine (engine.js) and the workspace (workspace.js) for the
// page's pure modules: each answers only what a test gives it.

// result is an engine call's answer: a status name and the output text.
export function result(status, value) {
  const text = value === undefined ? "" : typeof value === "string" ? value : JSON.stringify(value);
  return { status, text, ok: status === "ok", json: () => (text === "" ? null : JSON.parse(text)) };
}

// fakeEngine answers explainJSON(handle, line) and resolveJSON(handle,
// line) from answers[handle](line), describe from inputs, and counts the
// calls.
export function fakeEngine({ answers = {}, inputs = [], tests = {} } = {}) {
  const calls = [];
  const engine = {
    calls,
    workMs: 0, // 2 ms of the engine's own time per answer, as the worker counts it
    describe: () => result("ok", { inputs }),
    explainJSON: (handle, line) => answer(handle, line),
    resolveJSON: (handle, line) => answer(handle, line),
    test: (handle) => result("ok", tests[handle] ?? { passed: 0, failed: 0, cases: [] }),
  };
  const answer = (handle, line) => {
    calls.push([handle, line]);
    engine.workMs += 2;
    return answers[handle]?.(line) ?? result("bad_handle", { code: "bad_handle", message: `no handle ${handle}` });
  };
  return engine;
}

// fakeWorkspace has the files given (path -> text) as served, and
// current(ref) answers loaded.
export function fakeWorkspace(files = {}, loaded = { handle: 1, errors: null }) {
  const originals = new Map(Object.entries(files));
  const refs = [...new Set([...originals.keys()].map((p) => p.split("/").slice(0, 2).join("@")))].sort();
  return { originals, refs, edits: new Map(), current: () => loaded };
}
