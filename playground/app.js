// The playground: rule files in editors, an input, and the decision the
// engine (the same WebAssembly module the other hosts run) makes of them,
// updated as the person types. See docs/playground.md.
//
// This file wires the page together: the state (state.js) and what
// changes it, the events, and when each view is drawn. A change
// schedules one refresh: decide (decide.js), record it, show it; the
// tests and "what changed" wait until the typing pauses.

import { Engine } from "./engine.js";
import { InputForm } from "./form.js";
import { examples, applyTo, insertedLine } from "./examples.js";
import { examplesMenu } from "./menu.js";
import { decodeState, StateError, tarball } from "./share.js";
import { h, renderDecision, renderTrace, renderTests, renderProblems } from "./views.js";
import { renderDiff } from "./diff.js";
import { Workspace } from "./workspace.js";
import { installAPI } from "./api.js";
import { followRules } from "./live.js";
import { newState, selectRef, setInput, noteChange, takeChange, recordDecision, testsDue, recordTests, forgetTests, nextReveal } from "./state.js";
import { decide, decidingStep } from "./decide.js";
import { inputObject, keepDeclared } from "./input.js";
import { Files } from "./files.js";
import { ShareLink, linkState, fromLink } from "./link.js";
import { showMessage, hideMessage } from "./message.js";
import { markDecision, statusText } from "./timings.js";
import { InteropGrid } from "./interop.js";

performance.mark("dlroute:script");

const $ = (id) => document.querySelector(`[data-testid="${id}"]`);

const st = newState();
const files = new Files(st, { tabs: $("file-tabs"), host: $("editors"), revert: $("revert"), hint: "editor-keys" }, {
  edited: () => schedule("rules"),
  opened: () => link.schedule(),
});
const link = new ShareLink(st, $("share-link"));
let form = null; // the InputForm, built in start()
const grid = new InteropGrid($("interop"), { open: openStep });

// The scheduling: one refresh per task however fast the typing, and the
// tests and "what changed" a moment after it.
let refreshPending = false;
let afterTimer = 0;

// schedule coalesces changes into one refresh. kind, "rules" or
// "input", names what the person changed, for the page's measures.
function schedule(kind = "other") {
  noteChange(st, kind, performance.now());
  if (refreshPending) return;
  refreshPending = true;
  setTimeout(refresh, 0);
}

// refresh decides the current input with the current rules and shows it.
// It is synchronous: the module answers in milliseconds.
function refresh() {
  refreshPending = false;
  if (!st.engine) return; // start() decides once the module is ready
  const change = takeChange(st, performance.now());
  let parts;
  try {
    const started = performance.now();
    const outcome = decide(st, () => performance.now());
    parts = show(outcome, started);
  } catch (e) {
    return engineFailed(e);
  }
  markDecision(st, change, parts);
  clearTimeout(afterTimer);
  afterTimer = setTimeout(afterDecision, st.testedHandle === undefined ? 0 : 250);
  link.schedule();
}

// show records a decision's outcome and draws it; it returns how long
// each part took, for the page's measures.
function show(outcome, started) {
  if (outcome.inputs && form.setInputs(outcome.inputs)) syncForm();
  recordDecision(st, outcome);
  showInputProblem(outcome.inputProblem);
  renderProblems($("problems"), st.problems, (pos) => files.show(pos));
  const good = st.lastGood;
  renderDecision($("decision"), { explanation: good?.explanation, ms: good?.ms, stale: good ? outcome.stale : outcome.stale || "No decision yet.", onRule: (pos) => files.show(pos) });
  renderTrace($("trace"), { explanation: good?.explanation, input: good?.input, onPosition: (pos) => files.show(pos) });
  const shown = performance.now();
  files.paint();
  const parts = { rules: outcome.ms.rules, decideAndShow: shown - started - outcome.ms.rules, paint: performance.now() - shown, explain: outcome.ms.explain };
  // A new input shows the rule that decided it; an edit leaves the
  // editor where the person is typing.
  if (good && !outcome.stale) {
    const step = decidingStep(good.explanation);
    if (nextReveal(st, step?.rule)) files.revealStep(step);
  }
  return parts;
}

function showInputProblem(text) {
  const m = $("input-message");
  m.textContent = text;
  m.hidden = !text;
  $("input-json").classList.toggle("invalid", !!text);
  $("input-json").setAttribute("aria-invalid", String(!!text));
}

// afterDecision runs what can wait for the typing to pause: the tests
// (once per handle) and what changed.
function afterDecision() {
  try {
    if (testsDue(st)) {
      recordTests(st, st.handle ? st.engine.test(st.handle).json() : null);
      renderTests($("tests"), st.testReport, { onCase: tryCase, onPosition: (pos) => files.show(pos) });
    }
    renderDiff($("diff"), {
      engine: st.engine, base: st.ws.original(st.ref).handle, edited: st.handle, report: st.testReport,
      edits: st.ws.editedPaths(st.ref), input: st.inputText,
      onInput: (line) => { showInput(line); schedule("input"); },
    });
  } catch (e) {
    engineFailed(e);
  }
}

// A trap (a Go panic, memory exhausted) leaves the instance unusable:
// start another from the compiled module and decide again.
async function engineFailed(e) {
  console.error(e);
  showMessage(`The engine stopped (${e.message}). It is being restarted; your edits are kept.`, "error");
  try {
    await st.engine.restart();
    st.ws.reset();
    forgetTests(st);
    schedule();
  } catch (e2) {
    showMessage(`The engine could not be restarted: ${e2.message}. Reload the page; the link keeps your edits.`, "error");
  }
}

// ---- the input ----

// syncForm shows the input's values in the form, when it is an object.
function syncForm() {
  const obj = inputObject(st.inputText);
  if (obj) form.fromJSON(obj);
}

// showInput makes text the input and shows it in the JSON box and the form.
function showInput(text) {
  setInput(st, text);
  $("input-json").value = text;
  syncForm();
}

function tryCase(c) {
  showInput(JSON.stringify(c.input));
  schedule();
}

// ---- rule sets, examples, links ----

// chooseRef shows ref's files, and keeps the input's values that ref
// also declares.
function chooseRef(ref) {
  selectRef(st, ref);
  $("ruleset").value = ref;
  files.build();
  if (!st.engine) return;
  try {
    const desc = st.engine.describe(st.ws.original(ref).handle || st.ws.current(ref).handle).json();
    showInput(keepDeclared(st.inputText, desc.inputs.map((d) => d.name)));
  } catch { /* the rules do not load: keep the text as it is */ }
}

function applyExample(id) {
  const ex = examples.find((e) => e.id === id);
  if (!ex) return;
  if (!st.ws.refs.includes(ex.ref)) return showMessage(`This example needs ${ex.ref}, which these rules do not have.`, "warn");
  const { edits, note } = applyTo(ex, (p) => st.ws.originals.get(p));
  st.ws.edits = edits;
  chooseRef(ex.ref);
  showInput(JSON.stringify(ex.input));
  if (ex.edit) {
    files.open(ex.edit.file);
    const line = insertedLine(ex, st.ws.textOf(ex.edit.file));
    if (line > 0) files.editor(ex.edit.file)?.reveal(line);
  }
  showMessage(`${ex.title}: ${note}`, "info");
  schedule();
}

// chooseAsked shows the version ?ruleset= names, as --ruleset would:
// ?ruleset=jax==0.10.2 opens the version for jax 0.10.2. A link's own
// state (#s=...) wins over it.
function chooseAsked(asked) {
  const found = st.ws.resolve(asked);
  if (found.error) return showMessage(`?ruleset=${asked}: ${found.error}`, "warn");
  chooseRef(found.ref);
  if (found.ref !== asked) showMessage(`?ruleset=${asked} is ${found.ref}.`, "info");
}

// readLink applies the link in the address bar, if any. One that does
// not read is said so, and stays there until the person changes something.
async function readLink() {
  let linked;
  try {
    linked = await decodeState(location.hash);
  } catch (e) {
    if (!(e instanceof StateError)) throw e;
    st.keepHash = true;
    showMessage(`This link could not be read: ${e.message}. The page starts from the seed's case instead.`, "error");
    return;
  }
  if (!linked) return;
  const l = fromLink(st.ws, linked, st.ref);
  st.ws.edits = l.edits;
  if (l.warning) showMessage(l.warning, "warn");
  st.wantFile = l.file;
  chooseRef(l.ref);
  showInput(l.input);
}

// fillRuleSets lists the versions in the rule-set menu.
function fillRuleSets() {
  const newest = (name) => st.ws.newest(name);
  $("ruleset").replaceChildren(...st.ws.refs.map((r) => new Option(r === newest(r.split("@")[0]) ? `${r} (default)` : r, r)));
  $("ruleset").value = st.ref;
}

// rulesReloaded shows the rules the server reloaded (live.js): the
// versions in the menu, the files in their editors (an edited file keeps
// the person's text), and a new decision.
function rulesReloaded() {
  forgetTests(st);
  const ref = st.ws.refs.includes(st.ref) ? st.ref : st.ws.newest(st.ref.split("@")[0]) ?? st.ws.refs[0];
  fillRuleSets();
  if (ref !== st.ref) showMessage(`${st.ref} is gone from the server; showing ${ref}.`, "warn");
  if (ref !== st.ref || !files.sameTabs()) chooseRef(ref);
  else files.reloadTexts();
  schedule();
  $("status").textContent = statusText(st.source, st.revision);
  loadInterop();
}

// ---- the interop grid ----

// loadInterop fetches interop.json, the matrix of the rules served (not
// the edits), and draws it; again whenever the served rules change.
async function loadInterop() {
  try {
    const resp = await fetch("interop.json", { cache: "no-cache" });
    if (!resp.ok) throw new Error(`${resp.status} ${resp.statusText}`);
    grid.show(await resp.json());
  } catch (e) {
    console.error(e);
    grid.failed(`The interop matrix could not be loaded (${e.message}).`);
  }
}

// openStep shows one step of an exchange the grid opened: its rule set
// and its input, so that the decision, the trace and the rule file show
// how the page's rules decide it.
function openStep(step) {
  if (!st.ws.refs.includes(step.ref)) return showMessage(`This step is ${step.ref}'s, which the page does not have.`, "warn");
  if (step.ref !== st.ref) chooseRef(step.ref);
  showInput(JSON.stringify(step.input));
  schedule();
  $("decision").scrollIntoView({ block: "nearest" });
}

function revertFile() {
  const path = st.active;
  const text = st.ws.edits.get(path);
  if (text === undefined) return;
  st.ws.edits.delete(path);
  files.editor(path).setText(st.ws.originals.get(path));
  showMessage(`${path} is back as served.`, "info", h("button", { class: "link", "data-testid": "undo-revert", onclick: () => {
    st.ws.edits.set(path, text);
    files.editor(path)?.setText(text);
    hideMessage();
    schedule();
  } }, "Undo"));
  schedule();
}

function download() {
  const blob = new Blob([tarball("rules", st.ws.all())], { type: "application/x-tar" });
  const a = h("a", { href: URL.createObjectURL(blob), download: "dlroute-rules.tar" });
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(a.href), 10_000);
  showMessage("dlroute-rules.tar: unpack it and run dlroute test --rules rules (or resolve, lint) on it.", "info");
}

async function copyLink() {
  st.keepHash = false;
  await link.update();
  try {
    await navigator.clipboard.writeText($("share-link").href);
    showMessage("The link is copied.", "info");
  } catch {
    showMessage("Copy the link from the address bar: this page may not write the clipboard.", "info");
  }
}

// ---- start ----

async function start() {
  // ?ruleset=, unless the address is a link to a state (which names its own).
  const asked = !location.hash && new URLSearchParams(location.search).get("ruleset");
  const print = (fd, line) => (fd === 2 ? console.error : console.log)(`dlroute.wasm: ${line}`);
  // The module compiles off the main thread while the page is built.
  const engine = Engine.instantiate("dlroute.wasm", print);
  engine.catch(() => {}); // awaited below
  const resp = await fetch("rules.json");
  if (!resp.ok) throw new Error(`fetching rules.json: ${resp.status} ${resp.statusText}`);
  const served = await resp.json();
  st.ws = new Workspace(served.files);
  st.source = served.source;
  st.revision = served.revision ?? "";
  selectRef(st, st.ws.newest("jax") ?? st.ws.refs[0]);

  fillRuleSets();
  $("ruleset").addEventListener("change", () => { chooseRef($("ruleset").value); schedule(); });
  examplesMenu($("examples"), examples, applyExample);
  form = new InputForm($("input-form"), () => {
    setInput(st, form.toJSON());
    $("input-json").value = st.inputText;
    schedule("input");
  });
  $("input-json").addEventListener("input", (e) => {
    setInput(st, e.target.value);
    syncForm();
    schedule("input");
  });
  $("download").addEventListener("click", download);
  $("revert").addEventListener("click", revertFile);
  $("copy-link").addEventListener("click", copyLink);
  window.addEventListener("hashchange", async () => {
    if (location.hash === st.writtenHash) return;
    await readLink();
    schedule();
  });

  chooseRef(st.ref);
  showInput(JSON.stringify(examples[0].input));
  await readLink();
  performance.mark("dlroute:page");
  st.engine = st.ws.engine = await engine;
  st.engine.setParsed(served.parsed);
  if (asked) chooseAsked(asked);
  performance.mark("dlroute:ready");
  refresh();
  $("status").textContent = statusText(st.source, st.revision);
  loadInterop(); // after the first decision, which it must not delay
  if (served.live) followRules(st, rulesReloaded);
}

installAPI(st, {
  state: () => linkState(st),
  async link() {
    await link.update();
    return $("share-link").href;
  },
});

window.dlroute.ready = start().catch((e) => {
  console.error(e);
  showMessage(`The playground could not start: ${e.message}`, "error");
  throw e;
});
