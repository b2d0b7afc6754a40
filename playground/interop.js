// The interop grid: interop.json, the matrix `dlroute interop` decides,
// of the rules the server serves (playground/interop.go): every
// producer's array (a row: producer, platform, memory kind) handed to
// every consumer's from_dlpack (a column). Each cell says, in words as
// well as in colour, what the exchange comes to: in place, a copy and who
// makes it, values that arrive silently different, or the exception the
// user sees. Opening a cell shows how the consumer reads the array (by
// x.__dlpack__() or the C exchange API) and the fix of a refusal, and hands its
// deciding step to the page (a rule set and an input), so the page's own
// decision, trace and rule highlighting show it, decided again with the
// page's rules. The functions above the class touch no page, so
// test/interop.test.mjs runs them in Node.

import { h } from "./views.js";

// rowLabel is a row header's platform in words: a multi-line
// platform_version's line breaks shown as ⏎, its quotes dropped.
export function rowLabel(platform) {
  return platform.replaceAll("\\n", " ⏎ ").replaceAll("\n", " ⏎ ").replaceAll('"', "");
}

// library is a ref's library: "torch@v3" -> "torch".
export const library = (ref) => ref.split("@")[0];

// The filters of the grid: which kinds of cell it shows.
const filters = {
  all: { label: "every cell", keeps: () => true },
  answers: { label: "crossings only (in place, copies)", keeps: (kind) => kind === "in-place" || kind === "copy" },
  silent: { label: "silently different values only", keeps: (kind) => kind === "silent" },
  errors: { label: "exceptions only", keeps: (kind) => kind === "error" },
};

// The kinds of cell the grid draws: its class (the colour), its mark,
// and the legend's words.
const kinds = {
  "in-place": { mark: "✓", legend: "in place: the consumer's array shares the producer's memory" },
  copy: { mark: "⇄", legend: "a copy, and who makes it (the producer, the consumer, both)" },
  silent: { mark: "⚠", legend: "silently different: the consumer reads other values than the producer's, and nothing raises" },
  error: { mark: "✗", legend: "the exception the user sees" },
};

// silentType is the exception type the rules give an exchange that
// crosses with other values than the producer's: no exception reaches
// the user (rules/RATIONALE.md, "Why is a silent difference an error
// outcome named `SilentlyDifferent`, decided by the consumer?").
export const silentType = "SilentlyDifferent";

// kindOf is the kind a cell is drawn as: "in-place", "copy", "silent" or
// "error".
export function kindOf(cell) {
  if (cell.outcome === "in_place") return "in-place";
  if (cell.outcome?.endsWith("_copy")) return "copy";
  return cell.error?.type === silentType ? "silent" : "error";
}

// cellView is how a cell is drawn: its kind, its mark, the exception
// type in bold (or "silently different", which is no exception) and the
// whole text after it (the cell wraps it, never cuts it), and the whole
// text.
export function cellView(cell) {
  const kind = kindOf(cell);
  if (kind === "silent") {
    const message = cell.error.message ? `: ${cell.error.message}` : "";
    return { kind, mark: kinds[kind].mark, type: "silently different", whole: message, full: `silently different, nothing raises${message}` };
  }
  // short is "Type: message" for an exception (interop.Cell.Short).
  const type = cell.error && cell.short.startsWith(cell.error.type) ? cell.error.type : "";
  const full = cell.error ? (cell.error.message ? `${cell.error.type}: ${cell.error.message}` : cell.error.type) : cell.short;
  return { kind, mark: kinds[kind].mark, type, whole: full.slice(type.length), full };
}

// outcomeWords is an outcome (interop.Outcome) in a few words: what an
// exchange would come to, by a fix or by the other way to read the array.
export function outcomeWords(outcome, producer, consumer) {
  switch (outcome) {
    case "in_place": return "in place";
    case "producer_copy": return `a copy, made by ${library(producer)}`;
    case "consumer_copy": return `a copy, made by ${library(consumer)}`;
    case "both_copy": return `two copies, one made by ${library(producer)} and one by ${library(consumer)}`;
    case "error": return "an exception";
  }
  return outcome.replaceAll("_", " ");
}

// lanes are the ways a consumer reads a producer's array
// (interop.Lane), as its user would write them.
const lanes = {
  dlpack: "x.__dlpack__()",
  c_exchange_api: "the C exchange API (type(x).__dlpack_c_exchange_api__)",
};

// laneText says how the consumer reads the producer's array, and what
// the other way would come to where the cell says it differs; "" where
// the cell does not say.
export function laneText(cell, producer, consumer) {
  if (!cell.lane) return "";
  const c = library(consumer);
  const verb = kindOf(cell) === "error" ? "asks for" : "reads";
  let text = `${c} ${verb} ${library(producer)}'s array by ${lanes[cell.lane] ?? cell.lane}`;
  if (cell.other_lane) {
    const other = cell.lane === "dlpack" ? "c_exchange_api" : "dlpack";
    text += `; by ${lanes[other]} instead, it would be ${outcomeWords(cell.other_lane, producer, consumer)}`;
  }
  return `${text}.`;
}

// fixParts is a cell's remedy in words: {fix, outcome}, the fix as its
// user writes it and what the exchange comes to with it; null where the
// cell has none.
export function fixParts(cell, producer, consumer) {
  const r = cell.remedy;
  if (!r?.fix) return null;
  return { fix: r.fix, outcome: r.outcome ? outcomeWords(r.outcome, producer, consumer) : "" };
}

// fixView is a cell's remedy drawn: "Fix: <code>x.contiguous()</code> →
// in place" and a button that copies the fix; null where the cell has
// none. testid names the paragraph.
export function fixView(cell, producer, consumer, testid) {
  const parts = fixParts(cell, producer, consumer);
  if (!parts) return null;
  const code = h("code", { class: "fix-code", "data-testid": `${testid}-code` }, parts.fix);
  const said = h("span", { class: "muted", role: "status" });
  return h("p", { class: "fix", "data-testid": testid },
    h("b", {}, "Fix: "), code, parts.outcome ? ` → ${parts.outcome}` : "", " ",
    h("button", { class: "small", "data-testid": `${testid}-copy`, "aria-label": `copy the fix, ${parts.fix}`, onclick: () => copyFix(code, said) }, "Copy"), " ", said);
}

// copyFix puts the fix's text on the clipboard, or, where the page may
// not write it, selects the text for the person to copy; said says which.
async function copyFix(code, said) {
  try {
    await navigator.clipboard.writeText(code.textContent);
    said.textContent = "copied";
  } catch {
    getSelection().selectAllChildren(code);
    said.textContent = "selected: press Ctrl+C to copy it";
  }
}

// decidingStep is the index of the step that decided the cell's outcome:
// the one that raised, for a copy the producer made the __dlpack__ that
// made it, and otherwise the last (the consumer's import).
export function decidingStep(cell) {
  const steps = cell.steps ?? [];
  if (cell.outcome === "producer_copy") {
    for (let i = steps.length - 1; i >= 0; i--) if (steps[i].call === "__dlpack__" && steps[i].decision.copy) return i;
  }
  if (cell.outcome === "error") {
    for (let i = steps.length - 1; i >= 0; i--) if (steps[i].decision.error) return i;
  }
  return steps.length - 1;
}

// producerGroups splits the rows into runs of one producer, in order:
// [{producer, rows: [{row, index}]}], one table body each.
export function producerGroups(rows) {
  const groups = [];
  rows.forEach((row, index) => {
    const last = groups.at(-1);
    if (last?.producer === row.producer) last.rows.push({ row, index });
    else groups.push({ producer: row.producer, rows: [{ row, index }] });
  });
  return groups;
}

// moveTo is where a key moves the focus in a grid of n rows and m
// columns from [row, col]: the arrow keys one cell, Home and End to the
// row's ends (with Ctrl, the grid's); null for any other key.
export function moveTo([row, col], key, n, m, ctrl = false) {
  const clamp = (v, hi) => Math.max(0, Math.min(hi - 1, v));
  switch (key) {
    case "ArrowUp": return [clamp(row - 1, n), col];
    case "ArrowDown": return [clamp(row + 1, n), col];
    case "ArrowLeft": return [row, clamp(col - 1, m)];
    case "ArrowRight": return [row, clamp(col + 1, m)];
    case "Home": return ctrl ? [0, 0] : [row, 0];
    case "End": return ctrl ? [n - 1, m - 1] : [row, m - 1];
  }
  return null;
}

// stepText is one step in a line: "jax@v3 __dlpack_device__ → BufferError: ..."
// with the attempt where it is a second one.
export function stepText(step) {
  const d = step.decision;
  const answer = d.error ? `${d.error.type}: ${d.error.message}` : d.device_type ? `(${d.device_type}, ${d.device_id})${d.copy ? ", copy" : ""}` : "";
  return `${step.ref} ${step.call}${step.attempt > 1 ? ` (attempt ${step.attempt})` : ""}${answer ? ` → ${answer}` : ""}`;
}

// checkedText says what a cell rests on (interop.Checked): whether both
// sides' versions were run here against a real release, and for each
// version the releases it was checked against and how.
export function checkedText(cell) {
  const c = cell.checked;
  if (!c) return "";
  const version = (v) => {
    const byHow = { run: [], source: [] };
    for (const [rel, how] of Object.entries(v.checked ?? {})) (byHow[how] ??= []).push(rel);
    const parts = [["run", "run here"], ["source", "source only"]].filter(([k]) => byHow[k].length).map(([k, words]) => `${byHow[k].join(", ")} (${words})`);
    const warned = v.release_warning ? `; ${v.release_warning.message}` : "";
    return `${v.ruleset}: ${parts.length ? parts.join(", ") : "no release checked"}${warned}`;
  };
  const all = [...(c.producer ?? []), ...(c.consumer ?? [])].map(version).join("; ");
  return `${c.run ? "Run here on both sides" : "Not run here on both sides"}: ${all}.`;
}

// summaryText is the panel's line under its heading.
export function summaryText(doc) {
  if (doc.error) return "no grid: the rules served do not load";
  const producers = new Set(doc.rows.map((r) => r.producer)).size;
  return `${doc.rows.length} arrays of ${producers} producers into ${doc.consumers.length} consumers`;
}

// InteropGrid draws interop.json into its panel. open(step, cell) is
// called with the step a person opens.
export class InteropGrid {
  constructor(root, { open }) {
    this.root = root;
    this.openStep = open;
    this.doc = null;
    this.focus = [0, 0]; // the cell that Tab reaches: one stop for the whole grid
    this.opened = null; // {row, col, step}: the cell and step opened last
    this.status = null; // the live region that says what an opening shows
    this.steps = null; // the opened cell's steps
    this.filter = "all";
    this.remedies = false; // whether any cell of the document has a fix: where none has, a refusal's lack of one goes unsaid
    this.silent = false; // whether any cell is silently different: where none is, the legend and the filters leave it out
  }

  // failed says why there is no grid: interop.json did not load.
  failed(text) {
    this.root.replaceChildren(h("h2", {}, "Interop"), h("p", { class: "muted" }, text));
  }

  // show draws doc, interop.json as served.
  show(doc) {
    // The grid is of the default versions; the question above it asks of
    // every version (question.js).
    doc = { ...doc, rows: (doc.rows ?? []).filter((r) => !r.older) };
    this.doc = doc;
    this.remedies = doc.rows.some((r) => r.cells.some((c) => c.remedy));
    this.silent = doc.rows.some((r) => r.cells.some((c) => c.error?.type === silentType));
    if (!this.silent && this.filter === "silent") this.filter = "all";
    this.opened = null; // a row of the rules before may be another array now
    const n = doc.rows?.length ?? 0, m = doc.consumers?.length ?? 0;
    this.focus = [Math.min(this.focus[0], Math.max(n - 1, 0)), Math.min(this.focus[1], Math.max(m - 1, 0))];
    const revision = doc.revision ? `, revision ${doc.revision}` : "";
    const parts = [
      h("h2", {}, "Interop", h("span", { class: "summary", "data-testid": "interop-summary" }, summaryText(doc))),
      h("p", { class: "interop-note" },
        `${doc.call ?? "from_dlpack(x)"} of each producer's array into each consumer, as dlroute interop decides it: the rules the server serves (from ${doc.source}${revision}), not your edits in this page. `,
        "Rows are the producer's arrays, columns the consumers. Open a cell to see its deciding step here, decided again with the page's rules; the arrow keys move between cells."),
    ];
    if (doc.error) {
      parts.push(h("p", { class: "err-text" }, "The rules served do not load or cannot decide the matrix, so there is no grid:"), h("pre", { class: "json" }, doc.error));
    } else if (!n || !m) {
      parts.push(h("p", { class: "muted" }, "These rules have no library on both sides of an exchange (a rule set that declares the input call, or jax with jax-export), so there is nothing to exchange."));
    } else {
      this.status = h("p", { role: "status", class: "interop-status", "data-testid": "interop-status" });
      this.steps = h("div", { class: "interop-steps", "data-testid": "interop-steps" }, this.stepsView());
      parts.push(this.legend(), this.filterMenu(), h("div", { class: "interop-scroll", "data-testid": "interop-scroll" }, this.table()), this.status, this.steps);
    }
    this.root.replaceChildren(...parts);
  }

  legend() {
    return h("ul", { class: "interop-legend", "aria-label": "what the colours and marks mean" }, Object.entries(kinds).filter(([kind]) => kind !== "silent" || this.silent).map(([kind, k]) =>
      h("li", { class: `o-${kind}` }, h("span", { class: "mark", "aria-hidden": "true" }, k.mark), " ", k.legend)),
      h("li", {}, h("span", { class: "mark", "aria-hidden": "true" }, "•"), " run here: both sides' versions were checked against a real release (open a cell, or hover, for which releases)"));
  }

  filterMenu() {
    return h("label", { class: "interop-filter" }, "Show ",
      h("select", { "data-testid": "interop-filter", onchange: (e) => this.setFilter(e.target.value) },
        Object.entries(filters).filter(([k]) => k !== "silent" || this.silent).map(([k, f]) => h("option", { value: k, selected: k === this.filter ? true : null }, f.label))));
  }

  // setFilter shows only the cells of the outcomes chosen: a row with
  // none of them is hidden, and a cell of another outcome is left blank.
  setFilter(name) {
    this.filter = name;
    const keeps = filters[name].keeps;
    for (const tr of this.root.querySelectorAll("table.interop-grid tbody tr")) {
      let any = false;
      for (const td of tr.querySelectorAll("td")) {
        const kept = keeps(td.dataset.kind);
        td.classList.toggle("filtered", !kept);
        any ||= kept;
      }
      tr.hidden = !any;
    }
  }

  // close puts the opened cell's steps away and the focus back on it.
  close() {
    if (!this.opened) return false;
    const { row, col } = this.opened;
    this.opened = null;
    this.steps.replaceChildren();
    this.steps.classList.remove("open");
    document.documentElement.classList.remove("sheet-open");
    for (const b of this.root.querySelectorAll("button.cell[aria-current]")) b.removeAttribute("aria-current");
    this.root.querySelector(`button.cell[data-row="${row}"][data-col="${col}"]`)?.focus();
    return true;
  }

  table() {
    const { doc } = this;
    const head = h("thead", {}, h("tr", {},
      h("th", { scope: "col" }, "producer"), h("th", { scope: "col" }, "platform"), h("th", { scope: "col" }, "memory"),
      doc.consumers.map((c) => h("th", { scope: "col", class: "consumer" }, h("span", { class: "muted" }, "into "), c))));
    const bodies = producerGroups(doc.rows).map((g) => h("tbody", {}, g.rows.map(({ row, index }, k) => h("tr", {},
      k === 0 ? h("th", { scope: "rowgroup", rowspan: String(g.rows.length), class: "producer" }, g.producer) : null,
      h("th", { scope: "row", class: "platform", title: row.platform }, rowLabel(row.platform)),
      h("th", { scope: "row", class: "memory" }, row.memory),
      row.cells.map((cell, col) => this.cellElement(row, index, cell, col))))));
    const table = h("table", { class: "interop-grid", "data-testid": "interop-grid", onkeydown: (e) => this.key(e) },
      h("caption", {}, "Rows: the producer's array; columns: the consumer whose from_dlpack takes it."), head, bodies);
    return table;
  }

  cellElement(row, index, cell, col) {
    const v = cellView(cell);
    const fix = cell.remedy?.fix ? `\nFix: ${cell.remedy.fix}` : "";
    const [fr, fc] = this.focus;
    const opened = this.opened?.row === index && this.opened?.col === col;
    return h("td", { class: `o-${v.kind}${filters[this.filter].keeps(v.kind) ? "" : " filtered"}`, "data-kind": v.kind, "data-testid": "interop-cell", "data-producer": row.producer, "data-platform": row.platform, "data-memory": row.memory, "data-consumer": this.doc.consumers[col], "data-outcome": cell.outcome },
      h("button", {
        class: "cell", tabindex: fr === index && fc === col ? "0" : "-1", title: `${v.full}${fix}\n${checkedText(cell)}`, "aria-current": opened ? "true" : null,
        "data-row": String(index), "data-col": String(col),
        onclick: () => this.open(index, col, decidingStep(cell)),
        onfocus: () => this.setFocus(index, col),
      }, h("span", { class: "mark", "aria-hidden": "true" }, v.mark), " ", v.type ? h("b", {}, v.type) : null, v.whole,
      cell.checked?.run ? h("span", { class: "run", title: "run here on both sides" }, " •") : null));
  }

  // setFocus makes [row, col] the grid's one tab stop.
  setFocus(row, col) {
    this.focus = [row, col];
    for (const b of this.root.querySelectorAll("button.cell")) b.tabIndex = Number(b.dataset.row) === row && Number(b.dataset.col) === col ? 0 : -1;
  }

  key(e) {
    const b = e.target.closest?.("button.cell");
    if (!b) return;
    const to = moveTo([Number(b.dataset.row), Number(b.dataset.col)], e.key, this.doc.rows.length, this.doc.consumers.length, e.ctrlKey);
    if (!to) return;
    e.preventDefault();
    this.setFocus(...to);
    this.root.querySelector(`button.cell[data-row="${to[0]}"][data-col="${to[1]}"]`)?.focus();
  }

  // open shows step i of the cell at [row, col] in the page.
  open(row, col, i) {
    const cell = this.doc.rows[row].cells[col];
    const step = cell.steps[i];
    this.opened = { row, col, step: i };
    for (const b of this.root.querySelectorAll("button.cell")) {
      if (Number(b.dataset.row) === row && Number(b.dataset.col) === col) b.setAttribute("aria-current", "true");
      else b.removeAttribute("aria-current");
    }
    this.steps.replaceChildren(...this.stepsView());
    this.steps.classList.add("open");
    document.documentElement.classList.add("sheet-open"); // room under the grid, for the cell to scroll above the sheet
    this.root.querySelector(`button.cell[data-row="${row}"][data-col="${col}"]`)?.scrollIntoView({ block: "nearest", inline: "nearest" });
    this.status.textContent = `Showing step ${i + 1} of ${cell.steps.length}, ${step.ref} ${step.call}, in the input, the decision and the trace.`;
    this.openStep(step, cell);
  }

  // stepsView is the opened cell's steps, each a button that opens it,
  // the one shown marked; none before a cell is opened.
  stepsView() {
    const o = this.opened;
    if (!o) return [];
    const row = this.doc.rows[o.row], cell = row.cells[o.col], consumer = this.doc.consumers[o.col];
    const noFix = { error: "No fix the rules know of makes this exchange cross.", silent: "No fix the rules know of makes the consumer read the producer's values." }[kindOf(cell)];
    const lane = laneText(cell, row.producer, consumer);
    return [
      h("div", { class: "steps-head" },
        h("h3", {}, `${row.producer} ${rowLabel(row.platform)} ${row.memory} into ${consumer}: ${cellView(cell).full}`),
        h("button", { class: "small", "data-testid": "interop-close", "aria-label": "close the steps (Escape)", onclick: () => this.close() }, "Close")),
      fixView(cell, row.producer, consumer, "interop-fix") ??
        (noFix && this.remedies ? h("p", { class: "fix", "data-testid": "interop-fix" }, noFix) : null),
      lane ? h("p", { "data-testid": "interop-lane" }, lane) : null,
      h("p", { class: "muted", "data-testid": "interop-checked" }, checkedText(cell)),
      h("ol", { class: "interop-step-list" }, cell.steps.map((s, i) => h("li", { class: i === o.step ? "shown" : null },
        h("button", { class: "link", "aria-current": i === o.step ? "step" : null, onclick: () => this.open(o.row, o.col, i) }, stepText(s)),
        i === decidingStep(cell) ? h("span", { class: "muted" }, " (decided the outcome)") : null))),
    ].filter(Boolean);
  }
}
