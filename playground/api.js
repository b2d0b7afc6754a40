// window.dlroute: the page's API, for its tests and for the cross-host
// corpus. Decisions come from the rules as served, not the edits, and are
// byte for byte what the native engine writes for the same line:
// resolveJSON's and explainJSON's from the decision module wherever the
// plans hold the version, the rest from the compiler module, which they
// start.

import { tarball } from "./share.js";

// installAPI sets window.dlroute over the running page: st is its state
// (state.js), exclusive runs a task that uses the engine in its turn
// (app.js), state returns what a link keeps of it, link makes the share
// link for the state now, compiler starts the compiler module (app.js
// wantCompiler) and answers when it has. The engine's calls answer promises: the engine
// is in its worker.
export function installAPI(st, exclusive, { state, link, compiler }) {
  const served = async (ref) => (await st.ws.original(ref)).handle;
  const ask = async (op, ref, line) => {
    if (!st.engine) await compiler();
    return exclusive(async () => {
      const r = await st.engine[op](await served(ref), line);
      return { status: r.status, output: r.text };
    });
  };
  // decide is resolveJSON (op "decide") or explainJSON ("explain") from
  // the plans.
  const decide = (op, ref, line) => exclusive(async () => {
    const r = await st.plans[op](ref, line);
    return { status: r.status, output: r.text };
  });
  const decidedBy = (ref) => (st.plans && st.planRefs?.has(ref) ? "decision" : "compiler");
  window.dlroute = {
    ready: null, // resolves when the page has made its first decision
    refs: () => [...st.ws.refs],
    // revision names the rules the page has: rules.json's, then each
    // that a live server published (live.js).
    revision: () => st.revision ?? "",
    // resolveJSON and explainJSON answer {status, output}: the status's
    // name (ok, input_error, ...) and the module's output text.
    resolveJSON: (ref, line) => (decidedBy(ref) === "decision" ? decide("decide", ref, line) : ask("resolveJSON", ref, line)),
    explainJSON: (ref, line) => (decidedBy(ref) === "decision" ? decide("explain", ref, line) : ask("explainJSON", ref, line)),
    // decidedBy names the module resolveJSON(ref) and explainJSON(ref) answer from now:
    // "decision" (decision.wasm and plans.bin) or "compiler" (dlroute.wasm).
    decidedBy,
    test: async (ref) => {
      if (!st.engine) await compiler();
      return exclusive(async () => (await st.engine.test(await served(ref))).json());
    },
    state,
    link,
    edited: () => Object.fromEntries(st.ws.edits),
    // rulesTar is the download, base64: the rules directory with the edits.
    rulesTar() {
      const bytes = tarball("rules", st.ws.all());
      let bin = "";
      for (let i = 0; i < bytes.length; i += 0x8000) bin += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
      return btoa(bin);
    },
    // timings are the page's performance measures, in milliseconds from
    // the start of the navigation (marks) or long (measures).
    timings() {
      const m = (name) => performance.getEntriesByName(name).map((e) => e.duration);
      const at = (name) => performance.getEntriesByName(name)[0]?.startTime;
      // The compiler module once it has started, else the decision module,
      // as their workers fetched them (the status line shows the same).
      const wasm = st.engine?.wasm ?? st.plans?.wasm;
      return {
        cold: m("dlroute:cold-to-first-decision")[0], // the server's decision where the page opened on its case
        engineCold: m("dlroute:cold-to-engine-decision")[0], // the page's engine's first decision
        edits: m("dlroute:edit-to-decision"),
        rulesEdits: m("dlroute:rules-edit-to-decision"),
        inputEdits: m("dlroute:input-edit-to-decision"),
        editParts: st.timings.edits, // each change's {kind, ms, ...parts} (timings.js markDecision)
        first: st.timings.first,
        last: st.timings.last,
        marks: Object.fromEntries(["script", "worker", "wasm-request", "wasm-response", "wasm-fetched", "page", "compiled", "initialized", "compiler-wasm-fetched", "compiler-initialized", "ready", "first-decision", "engine-first-decision", "answer"].map((n) => [n, at(`dlroute:${n}`)])),
        wasm: wasm && { transferSize: wasm.transferSize, encodedBodySize: wasm.encodedBodySize, decodedBodySize: wasm.decodedBodySize },
      };
    },
  };
}
