// The question on the first screen: "from this library's array into that
// library's from_dlpack, with copy=": answered in words from interop.json
// (the matrix of the rules served, interop.go), with the step that decided
// and a button that opens it in the page (its rule set, its input, the
// rule highlighted), and the fix of a refusal. The functions above the class touch no page, so
// test/question.test.mjs runs them in Node.

import { h } from "./views.js";
import { decidingStep, fixView, kindOf, library, silentType } from "./interop.js";

// arrayLabel is a row's array in words: its platform (a multi-line
// platform_version shown with ⏎) and its memory kind.
export function arrayLabel(row) {
  return `${row.platform.replaceAll("\\n", " ⏎ ").replaceAll("\n", " ⏎ ")}, ${row.memory} memory`;
}

// fromDLPack is each library's from_dlpack as its users call it, where
// it is not <library>.from_dlpack.
const fromDLPack = { jax: "jax.dlpack.from_dlpack" };

// callText is the consumer's call as its user writes it.
export function callText(consumer, copy) {
  const arg = copy === undefined ? "" : `, copy=${copy ? "True" : "False"}`;
  const lib = library(consumer);
  return `${fromDLPack[lib] ?? `${lib}.from_dlpack`}(x${arg})`;
}

// answerText is a cell's outcome in a sentence: in place, a copy and who
// makes it, values that arrive silently different, or the exception the
// user sees, whole.
export function answerText(cell, producer, consumer, copy) {
  const p = library(producer), c = library(consumer);
  const on = cell.device ? ` on (${cell.device.device_type}, ${cell.device.device_id})` : "";
  switch (cell.outcome) {
    case "in_place": return `In place: ${c}'s array shares ${p}'s memory${on}; nothing is copied.`;
    case "producer_copy": return `A copy, made by ${p}: its __dlpack__ copies the array, and ${c} takes the copy${on}.`;
    case "consumer_copy": return `A copy, made by ${c}: its from_dlpack copies what ${p} exports${on}.`;
    case "both_copy": return `Two copies: ${p}'s __dlpack__ makes one, and ${c}'s from_dlpack another${on}.`;
  }
  const e = cell.error;
  if (e?.type === silentType) return `Silently different: ${callText(consumer, copy)} raises nothing, and ${c} reads other values than ${p}'s${e.message ? `: ${e.message}` : "."}`;
  const what = e ? (e.message ? `${e.type}: ${e.message}` : e.type) : cell.short;
  return `${callText(consumer, copy)} raises ${what}`;
}

// cellFor is the cell of interop.json for a row, a consumer's column and
// copy (undefined: from_dlpack(x)), or null where the document has no
// such variant.
export function cellFor(doc, row, col, copy) {
  if (copy === undefined) return doc.rows[row]?.cells[col] ?? null;
  const v = doc.copies?.find((c) => c.copy === copy);
  return v?.cells[row]?.[col] ?? null;
}

// defaultPick is the seed's question: a JAX GPU array with an unknown
// platform into torch, or the first row and column there are.
export function defaultPick(doc) {
  const row = Math.max(0, doc.rows.findIndex((r) => r.producer.startsWith("jax@") && r.platform.includes("<unknown>")));
  const col = Math.max(0, doc.consumers.findIndex((c) => c.startsWith("torch@")));
  return { producer: doc.rows[row]?.producer, row, col, copy: undefined };
}

// Question draws the question into root; open(step) shows a step in the
// page, as the grid's cells do.
export class Question {
  constructor(root, { open }) {
    this.root = root;
    this.openStep = open;
    this.doc = null;
    this.pick = null;
  }

  failed(text) {
    this.root.querySelector("[data-testid=answer]").textContent = text;
  }

  // show takes interop.json; the question asked before stays where the
  // new document still has it.
  show(doc) {
    this.doc = doc;
    if (doc.error || !doc.rows?.length || !doc.consumers?.length) {
      this.root.replaceChildren(h("h2", { id: "question-title" }, "Will my array cross?"),
        h("p", { class: "answer", "data-testid": "answer" }, doc.error ? "The rules served do not load, so there is no answer." : "These rules have no library on both sides of an exchange."));
      return;
    }
    const old = this.pick;
    this.pick = defaultPick(doc);
    if (old) {
      const row = doc.rows.findIndex((r) => r.producer === old.producer && r.platform === old.platform && r.memory === old.memory);
      const col = doc.consumers.indexOf(old.consumer);
      if (row >= 0 && col >= 0) this.pick = { producer: old.producer, row, col, copy: old.copy };
    }
    this.set({});
  }

  select(testid, label, options, value, onchange) {
    return h("label", { class: "ask-part" }, h("span", { class: "ask-word" }, label),
      h("select", { "data-testid": testid, onchange: (e) => onchange(e.target.value) },
        options.map(([v, text]) => h("option", { value: v, selected: v === value ? true : null }, text))));
  }

  draw() {
    const { doc, pick } = this;
    const producers = [...new Set(doc.rows.map((r) => r.producer))];
    const older = new Set(doc.rows.filter((r) => r.older).map((r) => r.producer));
    const rows = doc.rows.map((r, i) => [r, i]).filter(([r]) => r.producer === pick.producer);
    const copies = [["none", "copy=None"], ...(doc.copies ?? []).map((c) => [String(c.copy), `copy=${c.copy ? "True" : "False"}`])];
    const copyValue = pick.copy === undefined ? "none" : String(pick.copy);
    const form = h("div", { class: "ask", role: "group", "aria-labelledby": "question-title" },
      this.select("q-producer", "from", producers.map((p) => [p, `${library(p)} (${p}${older.has(p) ? ", an older version" : ""})`]), pick.producer, (v) => {
        const row = doc.rows.findIndex((r) => r.producer === v);
        this.set({ producer: v, row });
      }),
      this.select("q-array", "array", rows.map(([r, i]) => [String(i), arrayLabel(r)]), String(pick.row), (v) => this.set({ row: Number(v) })),
      this.select("q-consumer", "into", doc.consumers.map((c, i) => [String(i), `${callText(c).replace("(x)", "")} (${c})`]), String(pick.col), (v) => this.set({ col: Number(v) })),
      this.select("q-copy", "with", copies, copyValue, (v) => this.set({ copy: v === "none" ? undefined : v === "true" })));
    const row = doc.rows[pick.row], consumer = doc.consumers[pick.col];
    const cell = cellFor(doc, pick.row, pick.col, pick.copy);
    const parts = [h("h2", { id: "question-title" }, "Will my array cross?"), form];
    if (!cell) {
      parts.push(h("p", { class: "answer", "data-testid": "answer" }, `${callText(consumer, pick.copy)} is not decided here.`));
    } else {
      const i = decidingStep(cell);
      const step = cell.steps[i];
      parts.push(
        h("p", { class: `answer o-${kindOf(cell)}`, "data-testid": "answer", "data-outcome": cell.outcome }, answerText(cell, row.producer, consumer, pick.copy)),
        fixView(cell, row.producer, consumer, "answer-fix"),
        h("p", { class: "decided", "data-testid": "answer-step" },
          "Decided by ", h("button", { class: "link", "data-testid": "answer-rule", title: "show this step's input, decision and rule in the page", onclick: () => this.openStep(step, cell) },
            `rule ${step.decision.rule} of ${step.ref}`),
          ` (${step.call}${step.attempt > 1 ? `, attempt ${step.attempt}` : ""}, step ${i + 1} of ${cell.steps.length}) · `,
          h("a", { href: "#interop", "data-testid": "answer-grid" }, "every pair, in the grid")));
    }
    this.root.replaceChildren(...parts);
    this.root.dataset.producer = row.producer;
    this.root.dataset.platform = row.platform;
    this.root.dataset.consumer = consumer;
  }

  set(change) {
    const p = { ...this.pick, ...change };
    const row = this.doc.rows[p.row];
    this.pick = { ...p, producer: row.producer, platform: row.platform, memory: row.memory, consumer: this.doc.consumers[p.col] };
    this.draw();
  }
}
