// The playground: rule files in editors, an input, and the decision the
// engine (the same WebAssembly module the other hosts run) makes of them,
// updated as the person types. See README.md, "The playground".

import { Engine } from "./engine.js";
import { Editor } from "./editor.js";
import { InputForm } from "./form.js";
import { examples } from "./examples.js";
import { encodeState, decodeState, StateError, tarball, LINK_WARN, LINK_MAX } from "./share.js";
import { h, rulesPath, verdict, renderDecision, renderTrace, renderTests, renderProblems, ruleMarks } from "./views.js";
import { renderDiff } from "./diff.js";
import { Workspace, dirOf } from "./workspace.js";
import { installAPI } from "./api.js";
import { followRules } from "./live.js";

performance.mark("dlroute:script");

const FILE_ORDER = ["rules.yaml", "tests.yaml", "device_types.yaml", "manifest.yaml"];
// The page sends the engine at most this much input: its own limits
// (4096-byte strings) answer anything between with too_long.
const MAX_INPUT_BYTES = 1 << 20;

const $ = (id) => document.querySelector(`[data-testid="${id}"]`);

const app = {
  engine: null,
  ws: null, // the files as served and as edited, and their handles
  ref: "", // the rule set looked at, "jax@v3"
  active: "", // the path of the open file
  editors: new Map(), // path -> Editor
  form: null,
  inputText: "",
  lastGood: null, // {explanation, input, ref}
  message: "",
  timings: { edits: [] },
};

// refresh decides the current input with the current rules and shows it.
// It is synchronous: the module answers in milliseconds.
function refresh() {
  app.scheduled = false;
  if (!app.engine) return; // start() decides once the module is ready
  const started = app.changeAt ?? performance.now();
  app.changeAt = undefined;
  try {
    decide();
  } catch (e) {
    return engineFailed(e);
  }
  const ms = performance.now() - started;
  performance.mark("dlroute:decision");
  if (!performance.getEntriesByName("dlroute:first-decision").length) {
    performance.mark("dlroute:first-decision");
    performance.measure("dlroute:cold-to-first-decision", { start: 0, end: "dlroute:first-decision" });
  } else {
    performance.measure("dlroute:edit-to-decision", { start: started, end: "dlroute:decision" });
    if (app.changeKind !== "other") performance.measure(`dlroute:${app.changeKind}-edit-to-decision`, { start: started, end: "dlroute:decision" });
    app.timings.edits.push(ms);
  }
  app.changeKind = undefined;
  // The tests and what changed wait until the typing pauses.
  clearTimeout(app.afterTimer);
  app.afterTimer = setTimeout(afterDecision, app.testedHandle === undefined ? 0 : 250);
  scheduleLink();
}

function decide() {
  const t0 = performance.now();
  const { handle, errors } = app.ws.current(app.ref);
  const t1 = performance.now();
  let problems = errors ?? [];
  let stale = "";
  if (handle) {
    const desc = app.engine.describe(handle).json();
    if (app.form.setInputs(desc.inputs)) syncFormFromJSON();
  }
  let parsed = null;
  let inputProblem = "";
  if (new TextEncoder().encode(app.inputText).length > MAX_INPUT_BYTES) {
    inputProblem = `the input is ${(app.inputText.length / 1048576).toFixed(1)} MiB; the page sends at most 1 MiB (the engine takes strings up to 4096 bytes)`;
  } else {
    try {
      parsed = JSON.parse(app.inputText);
      if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) inputProblem = "the input must be a JSON object";
    } catch (e) {
      inputProblem = `the input is not valid JSON: ${e.message}`;
    }
  }
  if (!handle) {
    stale = `The rules do not load (${problems.length} ${problems.length === 1 ? "error" : "errors"}, marked in the editor). This is the last decision they made.`;
  } else if (inputProblem) {
    stale = "The input has a problem (above). This is the decision for the last valid input.";
  } else {
    const t0 = performance.now();
    const r = app.engine.explainJSON(handle, app.inputText);
    const ms = performance.now() - t0;
    app.timings.explain = ms;
    if (r.ok) {
      app.lastGood = { explanation: r.json(), input: parsed, ref: app.ref, ms };
    } else {
      const e = r.json();
      if (r.status === "input_error") {
        inputProblem = `${e.code}: ${e.message}${e.hint ? ` (hint: ${e.hint})` : ""}`;
        stale = "The input has a problem (above). This is the decision for the last valid input.";
      } else {
        problems = [e];
        stale = `The rules could not decide this input (${e.code}). This is the last decision they made.`;
      }
    }
  }
  showInputProblem(inputProblem);
  app.problems = problems;
  renderProblems($("problems"), problems, openPosition);
  const good = app.lastGood;
  renderDecision($("decision"), { explanation: good?.explanation, ms: good?.ms, stale: good ? stale : stale || "No decision yet.", onRule: openPosition });
  renderTrace($("trace"), { explanation: good?.explanation, input: good?.input, onPosition: openPosition });
  app.handle = handle;
  const t2 = performance.now();
  paintEditors();
  app.timings.last = { rules: t1 - t0, decideAndShow: t2 - t1, paint: performance.now() - t2, explain: app.timings.explain };
  app.timings.first ??= app.timings.last;
  // A new input shows the rule that decided it; an edit leaves the
  // editor where the person is typing.
  if (app.revealRule && good && !stale) {
    app.revealRule = false;
    const step = good.explanation.trace.rules.find((s) => s.matched || s.error);
    const path = step && rulesPath(step.position.file);
    if (path && path === app.active && app.editors.has(path) && step.rule !== app.shownRule) app.editors.get(path).ed.reveal(step.position.line);
    app.shownRule = step?.rule;
  }
}

function showInputProblem(text) {
  const m = $("input-message");
  m.textContent = text;
  m.hidden = !text;
  $("input-json").classList.toggle("invalid", !!text);
}

// afterDecision runs what can wait a frame: the tests and what changed.
function afterDecision() {
  try {
    const handle = app.handle;
    if (handle !== app.testedHandle) {
      app.testedHandle = handle;
      app.testReport = handle ? app.engine.test(handle).json() : null;
      renderTests($("tests-summary"), $("tests-list"), app.testReport, { onCase: tryCase, onPosition: openPosition });
    }
    const base = app.ws.original(app.ref);
    renderDiff($("diff"), { engine: app.engine, base: base.handle, edited: handle, report: app.testReport, edits: app.ws.editedPaths(app.ref), input: app.inputText, onInput: (line) => { setInput(line); schedule("input"); } });
  } catch (e) {
    engineFailed(e);
  }
}

// schedule coalesces changes: one refresh per task, however fast the typing.
// kind, "rules" or "input", names what the person changed, for the
// page's performance measures.
function schedule(kind = "other") {
  app.keepHash = false;
  app.changeAt ??= performance.now();
  app.changeKind = app.changeKind && app.changeKind !== kind ? "other" : kind;
  if (app.scheduled) return;
  app.scheduled = true;
  setTimeout(refresh, 0);
}

// A trap (a Go panic, memory exhausted) leaves the instance unusable:
// start another from the compiled module and decide again.
async function engineFailed(e) {
  console.error(e);
  showMessage(`The engine stopped (${e.message}). It is being restarted; your edits are kept.`, "error");
  try {
    await app.engine.restart();
    app.ws.reset();
    app.testedHandle = undefined;
    schedule();
  } catch (e2) {
    showMessage(`The engine could not be restarted: ${e2.message}. Reload the page; the link keeps your edits.`, "error");
  }
}

// ---- editors ----

function tabPaths() {
  const own = app.ws.filesOf(app.ref).sort((a, b) => FILE_ORDER.indexOf(a.split("/")[2]) - FILE_ORDER.indexOf(b.split("/")[2]));
  const imported = app.ws.closure(app.ref).filter((r) => r !== app.ref).map((r) => `${dirOf(r)}/rules.yaml`).filter((p) => app.ws.originals.has(p));
  return [...own, ...imported];
}

function buildEditors() {
  const paths = tabPaths();
  const host = $("editors");
  const tabs = $("file-tabs");
  host.replaceChildren();
  tabs.replaceChildren();
  app.editors.clear();
  for (const path of paths) {
    const own = path.startsWith(dirOf(app.ref) + "/");
    const name = path.split("/")[2];
    const box = h("div", { class: "editor-box", hidden: true });
    host.append(box);
    const ed = new Editor(box, { testid: own ? `editor-${name}` : `editor-${path}`, label: path, describedBy: "editor-keys" });
    ed.setText(app.ws.textOf(path));
    ed.onInput((text) => {
      app.ws.edit(path, text);
      updateTabs();
      schedule("rules");
    });
    app.editors.set(path, { ed, box });
    tabs.append(h("button", { role: "tab", class: "tab", "data-path": path, "data-testid": `tab-${own ? name : path}`, onclick: () => openFile(path) },
      own ? name : `${path.split("/").slice(0, 2).join("@").replace("/", "@")} (imported) rules.yaml`));
  }
  // A new rule set opens its own rules.yaml, unless a link names a file.
  const wanted = app.wantFile ?? (app.active.startsWith(dirOf(app.ref) + "/") ? app.active : "");
  app.wantFile = undefined;
  app.active = paths.includes(wanted) ? wanted : paths.find((p) => p.endsWith("/rules.yaml")) ?? paths[0];
  openFile(app.active);
}

function openFile(path) {
  app.active = path;
  for (const [p, { box, ed }] of app.editors) {
    box.hidden = p !== path;
    ed.setVisible(p === path);
  }
  updateTabs();
  scheduleLink();
}

function updateTabs() {
  const errorFiles = new Set((app.problems ?? []).filter((e) => e.position).map((e) => rulesPath(e.position.file)));
  for (const tab of $("file-tabs").children) {
    const p = tab.dataset.path;
    tab.setAttribute("aria-selected", String(p === app.active));
    tab.classList.toggle("edited", app.ws.edits.has(p));
    tab.classList.toggle("has-error", errorFiles.has(p));
  }
  $("revert").disabled = !app.ws.edits.has(app.active);
}

function paintEditors() {
  const good = app.lastGood?.ref === app.ref ? app.lastGood : null;
  for (const [path, { ed }] of app.editors) {
    const errors = (app.problems ?? []).filter((e) => e.position && rulesPath(e.position.file) === path)
      .map((e) => ({ line: e.position.line, column: e.position.column, message: `${e.code}: ${e.message}` }));
    ed.setMarks({ ...ruleMarks(path, ed.text, good?.explanation, good?.input), errors });
  }
  updateTabs();
}

function openPosition(pos) {
  const path = rulesPath(pos.file);
  if (!app.editors.has(path)) return;
  openFile(path);
  const { ed } = app.editors.get(path);
  ed.reveal(pos.line, pos.column);
  ed.focus();
}

// ---- input ----

function syncFormFromJSON() {
  try {
    const obj = JSON.parse(app.inputText);
    if (obj && typeof obj === "object" && !Array.isArray(obj)) app.form.fromJSON(obj);
  } catch { /* the JSON box shows the problem */ }
}

function setInput(text) {
  app.revealRule = true;
  app.inputText = text;
  $("input-json").value = text;
  syncFormFromJSON();
}

function tryCase(c) {
  setInput(JSON.stringify(c.input));
  schedule();
}

// ---- rule sets, examples, messages ----

function selectRef(ref) {
  app.ref = ref;
  $("ruleset").value = ref;
  app.testedHandle = undefined;
  buildEditors();
  // Keep the values the new rule set also declares.
  if (!app.engine) return;
  try {
    const obj = JSON.parse(app.inputText);
    const desc = app.engine.describe(app.ws.original(ref).handle || app.ws.current(ref).handle).json();
    const names = new Set(desc.inputs.map((d) => d.name));
    setInput(JSON.stringify(Object.fromEntries(Object.entries(obj).filter(([k]) => names.has(k)))));
  } catch { /* keep the text as it is */ }
}

function applyExample(id) {
  const ex = examples.find((e) => e.id === id);
  if (!ex) return;
  if (!app.ws.refs.includes(ex.ref)) return showMessage(`This example needs ${ex.ref}, which these rules do not have.`, "warn");
  let note = ex.note;
  // An example's edits replace the edits before it.
  app.ws.edits = new Map();
  if (ex.edit) {
    const text = app.ws.textOf(ex.edit.file) ?? "";
    if (!text.includes(ex.edit.insert)) {
      const at = text.indexOf(ex.edit.after);
      if (at < 0) note = `${ex.note} (The line it adds after is not in ${ex.edit.file}, so the edit was not made.)`;
      else app.ws.edits.set(ex.edit.file, text.slice(0, at + ex.edit.after.length) + ex.edit.insert + text.slice(at + ex.edit.after.length));
    }
  }
  selectRef(ex.ref);
  setInput(JSON.stringify(ex.input));
  if (ex.edit) {
    openFile(ex.edit.file);
    const line = app.ws.textOf(ex.edit.file).split("\n").findIndex((l) => ex.edit.insert.startsWith(l)) + 1;
    if (line > 0) app.editors.get(ex.edit.file).ed.reveal(line);
  }
  showMessage(`${ex.title}: ${note}`, "info");
  schedule();
}

function showMessage(text, kind = "info") {
  const m = $("message");
  m.replaceChildren(h("span", {}, text), h("button", { class: "link", "aria-label": "dismiss", onclick: () => (m.hidden = true) }, "×"));
  m.dataset.kind = kind;
  m.hidden = false;
}

// ---- the share link ----

function stateNow() {
  return { ref: app.ref, input: app.inputText, edits: Object.fromEntries(app.ws.edits), file: app.active };
}

function scheduleLink() {
  clearTimeout(app.linkTimer);
  app.linkTimer = setTimeout(updateLink, 150);
}

async function updateLink() {
  const frag = await encodeState(stateNow());
  const link = $("share-link");
  if (frag.length > LINK_MAX) {
    link.removeAttribute("href");
    link.textContent = "link: too long";
    link.title = `The state takes ${(frag.length / 1048576).toFixed(1)} MiB as a link, over the ${LINK_MAX >> 20} MiB a page makes; download the rules instead.`;
    return;
  }
  app.writtenHash = "#" + frag;
  if (location.hash !== app.writtenHash && !app.keepHash) history.replaceState(null, "", app.writtenHash);
  link.href = app.writtenHash;
  const kb = (link.href.length / 1024).toFixed(1);
  link.textContent = `link (${kb} KB)`;
  link.classList.toggle("long", frag.length > LINK_WARN);
  link.title = frag.length > LINK_WARN
    ? `This link is ${kb} KB: some chat tools and trackers cut links over 8 KB. The download keeps everything.`
    : "A link to this state: rule set, input and edits";
}

// applyState applies a decoded link; the rules it edits and the input
// are taken as they are, and the engine says what is wrong with them.
function applyState(s) {
  app.ws.edits = new Map(Object.entries(s.edits).filter(([p, t]) => app.ws.originals.get(p) !== t));
  const unknown = [...app.ws.edits.keys()].filter((p) => !app.ws.originals.has(p));
  for (const p of unknown) app.ws.edits.delete(p);
  if (!app.ws.refs.includes(s.ref)) showMessage(`The link names ${s.ref}, which these rules do not have; showing ${app.ref}.`, "warn");
  else if (unknown.length) showMessage(`The link edits ${unknown.join(", ")}, which these rules do not have; those edits were left out.`, "warn");
  const ref = app.ws.refs.includes(s.ref) ? s.ref : app.ref;
  app.wantFile = s.file;
  app.ref = "";
  selectRef(ref);
  setInput(s.input);
}

// ---- start ----

async function start() {
  const print = (fd, line) => (fd === 2 ? console.error : console.log)(`dlroute.wasm: ${line}`);
  // The module compiles off the main thread while the page is built.
  const engine = Engine.instantiate("dlroute.wasm", print);
  engine.catch(() => {}); // awaited below
  const resp = await fetch("rules.json");
  if (!resp.ok) throw new Error(`fetching rules.json: ${resp.status} ${resp.statusText}`);
  const served = await resp.json();
  app.ws = new Workspace(served.files);
  app.source = served.source;
  app.revision = served.revision;
  app.ref = app.ws.newest("jax") ?? app.ws.refs[0];

  const select = $("ruleset");
  fillRuleSets();
  select.addEventListener("change", () => { selectRef(select.value); schedule(); });
  const exSelect = $("examples");
  exSelect.append(...examples.map((e) => new Option(e.title, e.id)));
  // A closed <select> changes its value on an arrow key: that only moves
  // the choice, and Enter applies it; a choice from the open list (click,
  // or Enter in it) applies at once.
  let keyed = false;
  const applyChosen = () => { keyed = false; const id = exSelect.value; exSelect.value = ""; applyExample(id); };
  exSelect.addEventListener("keydown", (e) => {
    if (e.key === "Enter" && exSelect.value) { e.preventDefault(); applyChosen(); return; }
    keyed = !e.altKey && ["ArrowDown", "ArrowUp", "ArrowLeft", "ArrowRight", "Home", "End", "PageUp", "PageDown"].includes(e.key) || e.key.length === 1 && e.key !== " ";
  });
  exSelect.addEventListener("change", () => { if (keyed) keyed = false; else applyChosen(); });
  exSelect.addEventListener("blur", () => { keyed = false; exSelect.value = ""; });

  app.form = new InputForm($("input-form"), () => {
    app.revealRule = true;
    app.inputText = app.form.toJSON();
    $("input-json").value = app.inputText;
    schedule("input");
  });
  $("input-json").addEventListener("input", (e) => {
    app.revealRule = true;
    app.inputText = e.target.value;
    syncFormFromJSON();
    schedule("input");
  });
  $("download").addEventListener("click", download);
  $("revert").addEventListener("click", revertFile);
  $("copy-link").addEventListener("click", async () => {
    app.keepHash = false;
    await updateLink();
    try {
      await navigator.clipboard.writeText($("share-link").href);
      showMessage("The link is copied.", "info");
    } catch {
      showMessage("Copy the link from the address bar: this page may not write the clipboard.", "info");
    }
  });
  window.addEventListener("hashchange", async () => {
    if (location.hash === app.writtenHash) return;
    await fromLink();
    schedule();
  });

  selectRef(app.ref);
  setInput(JSON.stringify(examples[0].input));
  await fromLink();
  performance.mark("dlroute:page");
  app.engine = app.ws.engine = await engine;
  performance.mark("dlroute:ready");
  refresh();
  showStatus();
  if (served.live) followRules(app, rulesReloaded);
}

// fillRuleSets lists the versions in the rule-set menu.
function fillRuleSets() {
  const newest = (name) => app.ws.newest(name);
  $("ruleset").replaceChildren(...app.ws.refs.map((r) => new Option(r === newest(r.split("@")[0]) ? `${r} (default)` : r, r)));
  $("ruleset").value = app.ref;
}

// rulesReloaded shows the rules the server reloaded (live.js): the
// versions in the menu, the files in their editors (an edited file keeps
// the person's text), and a new decision.
function rulesReloaded() {
  app.testedHandle = undefined;
  const ref = app.ws.refs.includes(app.ref) ? app.ref : app.ws.newest(app.ref.split("@")[0]) ?? app.ws.refs[0];
  fillRuleSets();
  if (ref !== app.ref || tabPaths().join("\n") !== [...app.editors.keys()].join("\n")) {
    if (ref !== app.ref) showMessage(`${app.ref} is gone from the server; showing ${ref}.`, "warn");
    app.ref = "";
    selectRef(ref);
  } else {
    for (const [path, { ed }] of app.editors) ed.setText(app.ws.textOf(path));
    updateTabs();
  }
  schedule();
  showStatus();
}

async function fromLink() {
  try {
    const s = await decodeState(location.hash);
    if (s) applyState(s);
  } catch (e) {
    if (!(e instanceof StateError)) throw e;
    app.keepHash = true; // the link stays in the address bar until the person changes something
    showMessage(`This link could not be read: ${e.message}. The page starts from the seed's case instead.`, "error");
  }
}

function revertFile() {
  const path = app.active;
  const text = app.ws.edits.get(path);
  if (text === undefined) return;
  app.ws.edits.delete(path);
  app.editors.get(path).ed.setText(app.ws.originals.get(path));
  const m = $("message");
  showMessage(`${path} is back as served.`, "info");
  m.append(h("button", { class: "link", "data-testid": "undo-revert", onclick: () => {
    app.ws.edits.set(path, text);
    app.editors.get(path)?.ed.setText(text);
    m.hidden = true;
    schedule();
  } }, "Undo"));
  schedule();
}

function download() {
  const blob = new Blob([tarball("rules", app.ws.all())], { type: "application/x-tar" });
  const a = h("a", { href: URL.createObjectURL(blob), download: "dlroute-rules.tar" });
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(a.href), 10_000);
  showMessage("dlroute-rules.tar: unpack it and run dlroute test --rules rules (or resolve, lint) on it.", "info");
}

function showStatus() {
  const wasm = performance.getEntriesByType("resource").find((e) => e.name.endsWith("/dlroute.wasm"));
  const cold = performance.getEntriesByName("dlroute:cold-to-first-decision")[0];
  const parts = [];
  if (wasm) {
    const cached = wasm.transferSize < wasm.encodedBodySize / 10;
    parts.push(`module ${(wasm.decodedBodySize / 1048576).toFixed(1)} MiB, ${cached ? "from the browser's cache" : (wasm.transferSize / 1048576).toFixed(1) + " MiB transferred"}`);
  }
  if (cold) parts.push(`first decision ${Math.round(cold.duration)} ms after the page was asked for`);
  parts.push(`rules: ${app.source}${app.revision ? `, revision ${app.revision}` : ""}`);
  $("status").textContent = parts.join(" · ");
}

installAPI(app, {
  state: stateNow,
  async link() {
    await updateLink();
    return $("share-link").href;
  },
});

window.dlroute.ready = start().catch((e) => {
  console.error(e);
  showMessage(`The playground could not start: ${e.message}`, "error");
  throw e;
});
