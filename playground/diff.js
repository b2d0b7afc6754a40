// "What changed": the decisions that differ between the rules as served
// and as edited, for the same version, as `dlroute diff` computes them
// (dlroute_diff: every input of the domain derived from both versions'
// rules). Where that domain is larger than the module tries in a page,
// the view compares the test cases' inputs instead, and says so.

import { h, verdict } from "./views.js";

let last = { key: "", node: null };

// renderDiff fills root. base and edited are handles (0: did not load);
// report is the edited version's test report; edits the edited paths;
// onInput decides an example's input.
export async function renderDiff(root, { engine, base, edited, report, edits, input, onInput }) {
  if (edits.length === 0) {
    root.replaceChildren(h("h2", {}, "What changed"));
    root.dataset.changes = "0";
    root.append(h("p", { class: "muted" }, "No edits: the rules are as served. Edit a file to see which decisions change."));
    return;
  }
  if (!base || !edited) {
    root.replaceChildren(h("h2", {}, "What changed"));
    root.dataset.changes = "";
    root.append(h("p", { class: "muted" }, !base ? "The rules as served do not load, so there is nothing to compare with." : "The edited rules do not load: fix the errors to compare."));
    return;
  }
  const key = JSON.stringify([base, edited, input]);
  if (key !== last.key) last = { key, node: await compare(engine, base, edited, report, input, onInput) };
  root.replaceChildren(h("h2", {}, "What changed"));
  root.dataset.changes = last.node.dataset.changes;
  root.append(h("p", { class: "muted" }, `Edited: ${edits.join(", ")}.`), last.node);
}

async function compare(engine, base, edited, report, input, onInput) {
  const mine = await current(engine, base, edited, input);
  const r = engine.canDiff ? await engine.diff(base, edited) : null;
  if (r?.ok) {
    const node = fromReport(r.json(), onInput);
    node.prepend(mine);
    return node;
  }
  const why = r ? `${r.json()?.message ?? r.status}` : "this module has no dlroute_diff";
  const node = await overCases(engine, base, edited, report, onInput, why);
  node.prepend(mine);
  return node;
}

// current says how the input being looked at changed.
async function current(engine, base, edited, input) {
  const a = await engine.resolveJSON(base, input);
  const b = await engine.resolveJSON(edited, input);
  if (a.text === b.text) return h("p", { "data-testid": "diff-current" }, "The input above: decided the same.");
  return h("div", { class: "changes", "data-testid": "diff-current" }, h("b", {}, "The input above: "),
    h("div", { class: "before" }, h("b", {}, "served "), describe(a)),
    h("div", { class: "after" }, h("b", {}, "edited "), describe(b)));
}

// fromReport shows an engine.DiffReport.
function fromReport(rep, onInput) {
  const domain = h("details", { class: "domain" }, h("summary", {}, `the ${rep.tried} inputs: every combination of these values`),
    h("dl", { class: "values" }, rep.domain.inputs.flatMap((d) => [h("dt", {}, d.name), h("dd", {}, d.values.map((v) => JSON.stringify(v)).join("  "))])));
  const node = h("div", { class: "diff-body" },
    h("p", { "data-testid": "diff-summary" }, rep.changed === 0
      ? `No decision changed, over ${rep.tried} inputs derived from the rules (dlroute diff).`
      : `${rep.changed} of ${rep.tried} inputs derived from the rules decide differently, in ${rep.groups.length} ${rep.groups.length === 1 ? "group" : "groups"} (dlroute diff):`),
    domain,
    h("ol", { class: "changes" }, rep.groups.map((g) => h("li", {},
      h("div", { class: "name" }, `${outcome(g.from)} → ${outcome(g.to)}: ${g.count} ${g.count === 1 ? "input" : "inputs"}`),
      g.examples.map((x) => h("div", { class: "example" },
        h("button", { class: "link input", title: "decide this input", onclick: () => onInput(JSON.stringify(x.input)) }, JSON.stringify(x.input)),
        h("div", { class: "before" }, h("b", {}, "served "), answer(x.from)),
        h("div", { class: "after" }, h("b", {}, "edited "), answer(x.to))))))));
  node.dataset.changes = String(rep.changed);
  return node;
}

// outcome names one side of a diff group: the rule and what it gave.
export function outcome(o) {
  const what = o.device_type ?? o.error_type ?? o.failure ?? "";
  return `${o.rule ?? "no rule"}${what ? ` (${what})` : ""}`;
}

// answer is one side of a diff's example: a decision, or the error that
// kept the rules from deciding ({"eval_error": {...}}).
export function answer(a) {
  const e = a.eval_error ?? a.input_error;
  if (e) return `${a.eval_error ? "eval_error" : "input_error"}: ${e.code}: ${e.message}`;
  return `${verdict(a)} by ${a.rule}`;
}

// caseInputs are the distinct inputs of test reports' cases, each as a
// JSON line with the name of the first case that has it.
export function caseInputs(...reports) {
  const inputs = new Map();
  for (const c of reports.flatMap((r) => r?.cases ?? [])) {
    const line = JSON.stringify(c.input);
    if (!inputs.has(line)) inputs.set(line, c.name);
  }
  return inputs;
}

// changedInputs decides each input (line -> name) with both handles and
// returns those decided differently: {name, line, before, after}.
export async function changedInputs(engine, base, edited, inputs) {
  const changed = [];
  for (const [line, name] of inputs) {
    const a = await engine.resolveJSON(base, line);
    const b = await engine.resolveJSON(edited, line);
    if (a.text !== b.text) changed.push({ name, line, before: describe(a), after: describe(b) });
  }
  return changed;
}

// overCases decides the test cases' inputs with both versions.
async function overCases(engine, base, edited, report, onInput, why) {
  const inputs = caseInputs(report, (await engine.test(base)).json());
  const changed = await changedInputs(engine, base, edited, inputs);
  const node = h("div", { class: "diff-body" },
    h("p", { class: "muted" }, `The inputs derived from the rules are too many to try in the page (${why}); these are the test cases' inputs instead.`),
    h("p", { "data-testid": "diff-summary" }, changed.length === 0
      ? `No decision changed, over the ${inputs.size} test cases' inputs.`
      : `${changed.length} of the ${inputs.size} test cases' inputs decide differently:`),
    h("ol", { class: "changes" }, changed.map((c) => h("li", {},
      h("div", { class: "name" }, `case ${c.name}`),
      h("button", { class: "link input", title: "decide this input", onclick: () => onInput(c.line) }, c.line),
      h("div", { class: "before" }, h("b", {}, "served "), c.before),
      h("div", { class: "after" }, h("b", {}, "edited "), c.after)))));
  node.dataset.changes = String(changed.length);
  return node;
}

// describe is a resolveJSON result in a line: the decision and its rule,
// or the status and the error.
export function describe(r) {
  if (!r.ok) {
    const e = r.json();
    return `${r.status}: ${e?.code ?? ""} ${e?.message ?? ""}`;
  }
  const d = r.json();
  return `${verdict(d)} by ${d.rule}`;
}
