// The page's performance measures, read by window.dlroute.timings() and
// by the browser test, which records them in testout/playground/:
//
//	dlroute:cold-to-first-decision  navigation start to the first decision shown:
//	                                the server's (rules.json "first"), where the
//	                                page opens on its case, else the engine's
//	dlroute:cold-to-engine-decision navigation start to the page's engine's first
//	dlroute:edit-to-decision        a change to its decision shown, for every change after
//	dlroute:rules-edit-to-decision  the same, for a change of the rules only
//	dlroute:input-edit-to-decision  the same, for a change of the input only
//
// and the marks dlroute:script, page, ready, first-decision and
// engine-first-decision on the way (first.js and plans.js add compiled
// and initialized, the decision module's; the compiler module's worker
// adds worker, wasm-request, wasm-response, wasm-fetched, compiled and
// initialized, worker.js, after compiler- where the page decides with
// plans first), dlroute:answer,
// the question on the first screen answered, and
// dlroute:compiler-asked, the page starting the compiler module. The page's
// own work on its main thread is measured in parts (app.js measured):
//
//	dlroute:build-page     the page built from rules.json, before the engine is ready
//	dlroute:show           a decision drawn (show-form, paint-editors, reveal within it)
//	dlroute:draw-question  the question answered from interop.json
//	dlroute:draw-grid      the interop grid drawn
//	dlroute:draw-tests     the tests pane drawn

// markDecision records a decision shown now for change ({at, kind},
// state.js takeChange), and its parts in st.timings, in milliseconds:
//
//	waited   the change to the start of its refresh (behind the one before)
//	decide   the refresh's work in the engine's worker, round trips included:
//	rules      of it, loading the rules as edited (decide.js)
//	explain    of it, the explanation of the input
//	worker     of it, the engine's own time in its calls (the rest is
//	           messages, and calls waiting their turn in the worker)
//	show     the decision drawn on the main thread, but for
//	paint    the editors repainted
//
// served is the server's decision of the first screen (rules.json
// "first"), shown before the engine has started: it is the first
// decision, and the engine's own first decision after it is no edit.
export function markDecision(st, change, parts, served = false) {
  const ms = performance.now() - change.at;
  performance.mark("dlroute:decision");
  const first = !performance.getEntriesByName("dlroute:first-decision").length;
  if (first) {
    performance.mark("dlroute:first-decision");
    performance.measure("dlroute:cold-to-first-decision", { start: 0, end: "dlroute:first-decision" });
  }
  if (served) return;
  st.timings.last = parts;
  st.timings.first ??= parts;
  if (!performance.getEntriesByName("dlroute:engine-first-decision").length) {
    performance.mark("dlroute:engine-first-decision");
    performance.measure("dlroute:cold-to-engine-decision", { start: 0, end: "dlroute:engine-first-decision" });
    return;
  }
  performance.measure("dlroute:edit-to-decision", { start: change.at, end: "dlroute:decision" });
  if (change.kind !== "other") performance.measure(`dlroute:${change.kind}-edit-to-decision`, { start: change.at, end: "dlroute:decision" });
  st.timings.edits.push({ kind: change.kind, ms, ...parts });
}

// coldLoad is the first decision's measure in milliseconds, or undefined
// before it is shown.
export function coldLoad(name = "first-decision") {
  return performance.getEntriesByName(`dlroute:cold-to-${name}`)[0]?.duration;
}

// statusText is the footer's line: the module's size and how it came, the
// cold load, and where the rules come from.
// wasm is the module's resource timing, as the engine's worker fetched it.
export function statusText(source, revision, wasm) {
  const cold = coldLoad();
  const parts = [];
  if (wasm) {
    const cached = wasm.transferSize < wasm.encodedBodySize / 10;
    parts.push(`module ${(wasm.decodedBodySize / 1048576).toFixed(1)} MiB, ${cached ? "from the browser's cache" : (wasm.transferSize / 1048576).toFixed(1) + " MiB transferred"}`);
  }
  const engine = coldLoad("engine-decision");
  if (cold !== undefined) parts.push(`first decision ${Math.round(cold)} ms after the page was asked for`);
  if (engine !== undefined && engine !== cold) parts.push(`the page's engine's ${Math.round(engine)} ms`);
  parts.push(`rules: ${source}${revision ? `, revision ${revision}` : ""}`);
  return parts.join(" · ");
}
