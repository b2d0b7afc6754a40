// "What changed": the decisions that differ between the rules as served
// and as edited, for the same version.

import { h, verdict } from "./views.js";

let last = { key: "", node: null };

// renderDiff fills root. base and edited are handles (0: did not load);
// report is the edited version's test report; edits the edited paths.
export function renderDiff(root, { engine, base, edited, report, edits, input }) {
  root.replaceChildren(h("h2", {}, "What changed"));
  if (edits.length === 0) {
    root.dataset.changes = "0";
    root.append(h("p", { class: "muted" }, "No edits: the rules are as served. Edit a file to see which decisions change."));
    return;
  }
  root.append(h("p", { class: "muted" }, `Edited: ${edits.join(", ")}.`));
  if (!base || !edited) {
    root.dataset.changes = "";
    root.append(h("p", { class: "muted" }, !base ? "The rules as served do not load, so there is nothing to compare with." : "The edited rules do not load: fix the errors to compare."));
    return;
  }
  const key = JSON.stringify([base, edited, input]);
  if (key !== last.key) {
    last = { key, node: compare(engine, base, edited, report, input) };
  }
  root.dataset.changes = last.node.dataset.changes;
  root.append(last.node);
}

// compare decides the same inputs with both versions: every test case's
// input (as served and as edited) and the current input.
function compare(engine, base, edited, report, input) {
  const baseReport = engine.test(base).json();
  const inputs = new Map();
  const add = (name, obj) => {
    const line = typeof obj === "string" ? obj : JSON.stringify(obj);
    if (!inputs.has(line)) inputs.set(line, name);
  };
  add("the current input", input);
  for (const c of [...(report?.cases ?? []), ...(baseReport?.cases ?? [])]) add(`case ${c.name}`, c.input);
  const changed = [];
  for (const [line, name] of inputs) {
    const a = engine.resolveJSON(base, line);
    const b = engine.resolveJSON(edited, line);
    if (a.text !== b.text) changed.push({ name, line, before: describe(a), after: describe(b) });
  }
  const node = h("div", { class: "diff-body" },
    h("p", { "data-testid": "diff-summary" }, changed.length === 0
      ? `No decision changed, over ${inputs.size} inputs (the current one and every test case's).`
      : `${changed.length} of ${inputs.size} decisions changed (the current input and every test case's):`),
    h("ol", { class: "changes" }, changed.map((c) => h("li", {},
      h("div", { class: "name" }, c.name),
      h("code", { class: "input" }, c.line),
      h("div", { class: "before" }, h("b", {}, "served "), c.before),
      h("div", { class: "after" }, h("b", {}, "edited "), c.after)))));
  node.dataset.changes = String(changed.length);
  return node;
}

function describe(r) {
  if (!r.ok) {
    const e = r.json();
    return `${r.status}: ${e?.code ?? ""} ${e?.message ?? ""}`;
  }
  const d = r.json();
  return `${verdict(d)} by ${d.rule}`;
}
