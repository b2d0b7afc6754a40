// decide is one decision of the page: the rules as edited, the input as
// typed, and what the engine makes of them, as data for the views to show.
// It reads the state and changes nothing; app.js records the outcome
// (state.js recordDecision) and draws it. Nothing here touches the page
// (test/decide.test.mjs runs it on a fake engine).

import { checkInput, inputErrorText } from "./input.js";

// decide loads st.ref's rules as edited (st.ws.current), has the engine
// explain st.inputText with them, and returns:
//
//	handle        the rules' handle, 0 when they do not load
//	problems      the rules' load errors, or the eval error of this input
//	inputs        the rule set's declared inputs (dlroute_describe), or null
//	inputProblem  why the input was not decided ("" when it was)
//	decided       the new decision {explanation, input, ref, ms}, or null
//	stale         why the decision to show is not this input's ("" when it is)
//	ms            {rules, explain, worker}: how long the load and the
//	              explanation took, and the engine's own time in all of it
//	              (engine.workMs; the rest is messages and waiting)
//
// now is the clock (performance.now in the page).
//
// Until the compiler module has started (st.engine), a version as served
// that the plans hold (planned) is explained by the decision module
// instead (st.plans): the same explanation, byte for byte, with the
// inputs rules.json describes (st.described); handle is then 0.
export async function decide(st, now) {
  const plans = planned(st, st.ref);
  const engine = plans ? st.plans : st.engine;
  const t0 = now(), w0 = engine.workMs ?? 0;
  const { handle, errors } = plans ? { handle: 0, errors: null } : await st.ws.current(st.ref);
  const out = { handle, problems: errors ?? [], inputs: null, inputProblem: "", decided: null, stale: "", ms: { rules: now() - t0, explain: undefined, worker: undefined } };
  if (plans) out.inputs = st.described?.[st.ref]?.inputs ?? null;
  else if (handle) out.inputs = (await st.engine.describe(handle)).json().inputs;
  const input = checkInput(st.inputText);
  out.inputProblem = input.problem;
  if (!handle && !plans) {
    const n = out.problems.length;
    out.stale = `The rules do not load (${n} ${n === 1 ? "error" : "errors"}, marked in the editor). This is the last decision they made.`;
  } else if (input.problem) {
    out.stale = STALE_INPUT;
  } else {
    const t1 = now();
    const r = plans ? await st.plans.explain(st.ref, st.inputText) : await st.engine.explainJSON(handle, st.inputText);
    const ms = now() - t1;
    out.ms.explain = ms;
    if (r.ok) {
      out.decided = { explanation: r.json(), input: input.object, ref: st.ref, ms };
    } else if (r.status === "input_error") {
      out.inputProblem = inputErrorText(r.json());
      out.stale = STALE_INPUT;
    } else if (r.status !== "eval_error" && plans) {
      // no_ruleset, load_error: plans.bin is not what rules.json says.
      throw new Error(`the decision module answered ${r.status} for ${st.ref}: ${r.text}`);
    } else {
      const e = r.json();
      out.problems = [e];
      out.stale = `The rules could not decide this input (${e.code}). This is the last decision they made.`;
    }
  }
  out.ms.worker = (engine.workMs ?? 0) - w0;
  return out;
}

// planned says whether ref, as the page has it now, is decided with the
// plans: the compiler module has not started, the plans hold ref
// (st.planRefs), and no file ref reads is edited.
export function planned(st, ref) {
  return !st.engine && !!st.plans && !!st.planRefs?.has(ref) && !st.ws.editedPaths(ref).length;
}

const STALE_INPUT = "The input has a problem (above). This is the decision for the last valid input.";

// decidingStep is the trace's step of the rule that decided (or failed),
// for the editor to reveal; undefined when no rule did.
export function decidingStep(explanation) {
  return explanation?.trace.rules.find((s) => s.matched || s.error);
}
