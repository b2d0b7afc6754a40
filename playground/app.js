// The playground: rule files in editors, an input, and the decision the
// engine (the same WebAssembly module the other hosts run) makes of them,
// updated as the person types. See docs/playground.md.
//
// This file wires the page together: the state (state.js) and what
// changes it, the events, and when each view is drawn. A change
// schedules one refresh: decide (decide.js), record it, show it; the
// tests and "what changed" wait until the typing pauses.

import { Engine, startWorker } from "./worker.js";
import { plans as decisionPlans, firstSettled, takeFirst } from "./first.js";
import { InputForm } from "./form.js";
import { examples, applyTo, insertedLine } from "./examples.js";
import { examplesMenu } from "./menu.js";
import { decodeState, StateError, tarball } from "./share.js";
import { h, renderDecision, renderTrace, renderTests, renderTestsOffer, renderProblems } from "./views.js";
import { renderDiff } from "./diff.js";
import { Workspace } from "./workspace.js";
import { installAPI } from "./api.js";
import { followRules } from "./live.js";
import { newState, selectRef, setInput, noteChange, takeChange, recordDecision, testsDue, recordTests, forgetTests, nextReveal } from "./state.js";
import { decide, decidingStep, planned } from "./decide.js";
import { inputObject, keepDeclared } from "./input.js";
import { Files } from "./files.js";
import { ShareLink, linkState, fromLink } from "./link.js";
import { showMessage, hideMessage } from "./message.js";
import { markDecision, statusText } from "./timings.js";
import { InteropGrid } from "./interop.js";
import { Question } from "./question.js";

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
const question = new Question($("question"), { open: openStep });

// The scheduling: one refresh per task however fast the typing, and the
// tests and "what changed" a moment after it. A refresh starts in a
// microtask, at the end of the task that changed something and before
// the browser draws the change: the engine's worker decides while the
// main thread lays out and paints the key (playground/RATIONALE.md, "Why does a
// key's decision start before the key is drawn?").
let refreshPending = false;
let refreshing = false; // a refresh waits on the engine's worker
let afterTimer = 0;

// exclusive runs fn after every task that exclusive ran before it: the
// workspace's handles change across a task's awaits, so tasks that use
// the engine take turns.
let turn = Promise.resolve();
function exclusive(fn) {
  const done = turn.then(fn);
  turn = done.catch(() => {});
  return done;
}

// schedule coalesces changes into one refresh. kind, "rules" or
// "input", names what the person changed, for the page's measures.
function schedule(kind = "other") {
  noteChange(st, kind, performance.now());
  if (refreshPending) return;
  refreshPending = true;
  queueMicrotask(refresh);
}

// refresh decides the current input with the current rules, in the
// engine's worker, and shows it. Changes made while it waits are decided
// by the next refresh, which starts when this one has shown its decision.
async function refresh() {
  if (refreshing) return; // refreshPending stays set: this one runs the next
  refreshPending = false;
  if (!st.engine && !planned(st, st.ref)) {
    // start() decides once an engine is ready; after it, what the plans
    // lack (an edit) waits for the compiler module, which decides it.
    if (st.booted) wantCompiler();
    return;
  }
  refreshing = true;
  const started = performance.now();
  const change = takeChange(st, started);
  let parts;
  try {
    const outcome = await exclusive(() => decide(st, () => performance.now()));
    const decided = performance.now();
    checkServed(outcome);
    parts = measured("show", () => show(outcome));
    Object.assign(parts, { waited: started - change.at, decide: decided - started, show: performance.now() - decided - parts.paint });
  } catch (e) {
    refreshing = false;
    return engineFailed(e);
  }
  refreshing = false;
  markDecision(st, change, parts);
  decided();
  if (refreshPending) queueMicrotask(refresh);
}

// decided schedules what follows a decision shown: the tests and what
// changed, once the typing pauses, and the link.
function decided() {
  clearTimeout(afterTimer);
  afterTimer = setTimeout(afterDecision, st.testedHandle === undefined ? 0 : 250);
  link.schedule();
}

// showServed shows the server's decision of the first screen (rules.json
// "first", decided by the same engine natively) while the engine
// starts, where the page opened on that screen: the newest jax, the first
// example's input, no link to another state and no edit. It is the first
// decision; the engine's, when it has started, replaces it.
function showServed(first) {
  if (!first || first.ref !== st.ref || first.input !== st.inputText || st.ws.edits.size) return;
  st.served = first;
  const outcome = { handle: 0, problems: [], inputs: first.inputs, inputProblem: "", stale: "", ms: {},
    decided: { explanation: first.explanation, input: JSON.parse(first.input), ref: first.ref, served: true } };
  const at = performance.now();
  const parts = measured("show", () => show(outcome));
  markDecision(st, { at, kind: "other" }, parts, true);
}

// adoptFirst takes the decision first.js drew before the page was built
// as the page's first, where it is of the state the page opened in (the
// version and input of the page's first screen, no edit) and of the
// plans rules.json names: it is recorded and drawn as every decision is,
// and compared with the server's. It answers early, or null where the
// page decides its first case itself.
function adoptFirst(early, served) {
  if (!early || early.ref !== st.ref || early.input !== st.inputText || st.ws.edits.size) return null;
  if (served.plans && served.plans.etag !== early.etag) return null;
  const outcome = { handle: 0, problems: [], inputs: st.described[early.ref]?.inputs ?? null, inputProblem: "", stale: "",
    ms: { rules: early.parts.rules, explain: early.parts.explain, worker: early.parts.worker },
    decided: { explanation: early.explanation, input: JSON.parse(early.input), ref: early.ref, ms: early.parts.explain } };
  st.served = served.first;
  checkServed(outcome);
  measured("show", () => show(outcome));
  st.timings.first = st.timings.last = early.parts;
  return early;
}

// checkServed compares the engine's first decision with the server's,
// where it decided the served case (no key typed before the engine
// started changed it): the same code decided both, so a difference is a
// fault of the module or of the page, which the page says. Only the
// engine's first decision is compared.
function checkServed(outcome) {
  const first = st.served;
  st.served = null;
  if (!first || !outcome.decided || outcome.decided.ref !== first.ref || st.inputText !== first.input || st.ws.edits.size) return;
  if (JSON.stringify(outcome.decided.explanation) !== JSON.stringify(first.explanation)) {
    $("decision").dataset.disagreed = "true";
    console.error("the engine's decision of the first screen", outcome.decided.explanation, "the server's", first.explanation);
    showMessage("The page's engine decided the first screen's case differently from the server, which runs the same code: please report it, with this page's address.", "error");
  }
}

// show records a decision's outcome and draws it; it returns how long
// each part took, for the page's measures (timings.js markDecision).
function show(outcome) {
  measured("show-form", () => outcome.inputs && form.setInputs(outcome.inputs) && syncForm());
  recordDecision(st, outcome);
  showInputProblem(outcome.inputProblem);
  renderProblems($("problems"), st.problems, (pos) => files.show(pos));
  const good = st.lastGood;
  renderDecision($("decision"), { explanation: good?.explanation, ms: good?.ms, served: good?.served, stale: good ? outcome.stale : outcome.stale || "No decision yet.", onRule: (pos) => files.show(pos) });
  renderTrace($("trace"), { explanation: good?.explanation, input: good?.input, onPosition: (pos) => files.show(pos), textOf: (p) => st.ws.textOf(p) });
  const shown = performance.now();
  measured("paint-editors", () => files.paint());
  const parts = { rules: outcome.ms.rules, explain: outcome.ms.explain, worker: outcome.ms.worker, paint: performance.now() - shown };
  // A new input shows the rule that decided it; an edit leaves the
  // editor where the person is typing.
  if (good && !outcome.stale) {
    const step = decidingStep(good.explanation);
    if (nextReveal(st, step?.rule)) measured("reveal", () => files.revealStep(step));
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
// (once per handle) and what changed. They run on the second engine
// (st.idle, the same module in a second worker, with the same rules
// loaded there), so that a key typed while they run is decided at once.
// The first test of a version as served compiles its tests.yaml (the
// first decision did not wait for it); one that does not compile is no
// report, as rules that do not load are.
async function afterDecision() {
  if (refreshing || refreshPending) return; // the next decision runs it
  if (!idleStarted) {
    // The plans decide, and hold no tests: the tests wait for the
    // compiler module, which the person starts (or an edit does).
    if (st.testedHandle === undefined) renderTestsOffer($("tests"), () => wantCompiler());
    return;
  }
  const handle = st.handle, ref = st.ref, input = st.inputText;
  try {
    await idleTask(async (idle) => {
      if (handle !== st.handle || ref !== st.ref) return; // decided again since: that decision runs it
      const mine = (await idle.current(ref)).handle;
      if (testsDue(st)) {
        const r = mine ? await idle.engine.test(mine) : null;
        recordTests(st, r?.ok ? r.json() : null, handle);
        measured("draw-tests", () => renderTests($("tests"), st.testReport, { onCase: tryCase, onPosition: (pos) => files.show(pos) }));
      }
      await renderDiff($("diff"), {
        engine: idle.engine, base: (await idle.original(ref)).handle, edited: mine, report: st.testReport,
        edits: st.ws.editedPaths(ref), input,
        onInput: (line) => { showInput(line); schedule("input"); },
      });
    });
  } catch (e) {
    console.error(e);
    showMessage(`The tests could not run (${e.message}); the engine that runs them is being restarted.`, "error");
    try {
      await st.idle.engine.restart();
      st.idle.reset();
      forgetTests(st);
    } catch { /* the next decision tries again */ }
  }
}

// idleTask runs fn(st.idle) once the second engine has started, after
// every idleTask before it: the twin's handles change across its awaits.
let idleTurn = Promise.resolve();
let idleStarted = null; // resolves with st.idle
function idleTask(fn) {
  const done = idleTurn.then(async () => fn(await idleStarted));
  idleTurn = done.catch(() => {});
  return done;
}

// A trap (a Go panic, memory exhausted) leaves the instance unusable:
// start another from the compiled module and decide again.
async function engineFailed(e) {
  console.error(e);
  if (!st.engine) {
    // The decision module failed: the compiler module decides instead.
    st.plans = null;
    showMessage(`The decision module stopped (${e.message}); the page decides with the compiler module instead.`, "warn");
    wantCompiler();
    return;
  }
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

// measured runs fn, a part of the page's work on its main thread, and
// records how long it took as the measure dlroute:<name>.
function measured(name, fn) {
  const start = performance.now();
  try {
    return fn();
  } finally {
    performance.measure(`dlroute:${name}`, { start, end: performance.now() });
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
async function chooseRef(ref) {
  selectRef(st, ref);
  $("ruleset").value = ref;
  files.build();
  if (!st.engine) {
    const desc = st.described?.[ref]; // rules.json's, where the plans decide
    if (desc) showInput(keepDeclared(st.inputText, desc.inputs.map((d) => d.name)));
    return;
  }
  try {
    const desc = await exclusive(async () => (await st.engine.describe((await st.ws.original(ref)).handle || (await st.ws.current(ref)).handle)).json());
    showInput(keepDeclared(st.inputText, desc.inputs.map((d) => d.name)));
  } catch { /* the rules do not load: keep the text as it is */ }
}

async function applyExample(id) {
  const ex = examples.find((e) => e.id === id);
  if (!ex) return;
  if (!st.ws.refs.includes(ex.ref)) return showMessage(`This example needs ${ex.ref}, which these rules do not have.`, "warn");
  const { edits, note } = applyTo(ex, (p) => st.ws.originals.get(p));
  st.ws.edits = edits;
  await chooseRef(ex.ref);
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
async function chooseAsked(asked) {
  const found = await exclusive(() => st.ws.resolve(asked));
  if (found.error) return showMessage(`?ruleset=${asked}: ${found.error}`, "warn");
  await chooseRef(found.ref);
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
    showMessage(`This link could not be read: ${e.message}. The page starts from an unknown GPU platform instead.`, "error");
    return;
  }
  if (!linked) return;
  const l = fromLink(st.ws, linked, st.ref);
  st.ws.edits = l.edits;
  if (l.warning) showMessage(l.warning, "warn");
  st.wantFile = l.file;
  await chooseRef(l.ref);
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
async function rulesReloaded() {
  forgetTests(st);
  st.idle?.reset(); // its handles are of the rules before
  const ref = st.ws.refs.includes(st.ref) ? st.ref : st.ws.newest(st.ref.split("@")[0]) ?? st.ws.refs[0];
  fillRuleSets();
  if (ref !== st.ref) showMessage(`${st.ref} is gone from the server; showing ${ref}.`, "warn");
  if (ref !== st.ref || !files.sameTabs()) await chooseRef(ref);
  else files.reloadTexts();
  schedule();
  $("status").textContent = statusText(st.source, st.revision, st.engine?.wasm ?? st.plans?.wasm);
  loadInterop();
}

// ---- the interop grid ----

// loadInterop fetches interop.json, the matrix of the rules served (not
// the edits), and answers the question with it; again whenever the served
// rules change. The grid, a table of every cell, is drawn once the page
// is idle: its layout must not hold up the first decision's paint.
async function loadInterop() {
  let doc;
  try {
    const resp = await fetch("interop.json", { cache: "no-cache" });
    if (!resp.ok) throw new Error(`${resp.status} ${resp.statusText}`);
    doc = await resp.json();
  } catch (e) {
    console.error(e);
    grid.failed(`The interop matrix could not be loaded (${e.message}).`);
    question.failed(`No answer: the interop matrix could not be loaded (${e.message}).`);
    return;
  }
  measured("draw-question", () => question.show(doc));
  if (!performance.getEntriesByName("dlroute:answer").length) performance.mark("dlroute:answer");
  await window.dlroute.ready?.catch(() => {});
  await new Promise((ok) => (window.requestIdleCallback ?? setTimeout)(ok, { timeout: 500 }));
  measured("draw-grid", () => grid.show(doc));
}

// openStep shows one step of an exchange the grid opened: its rule set
// and its input, so that the decision, the trace and the rule file show
// how the page's rules decide it.
async function openStep(step) {
  if (!st.ws.refs.includes(step.ref)) return showMessage(`This step is ${step.ref}'s, which the page does not have.`, "warn");
  if (step.ref !== st.ref) await chooseRef(step.ref);
  showInput(JSON.stringify(step.input));
  schedule();
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
  // The decision module started on this thread (first.js) while the
  // page's modules arrived. Where the site has none, or it fails, the
  // compiler module starts at once and decides.
  const plans = decisionPlans;
  plans.catch((e) => {
    console.error("the decision module did not start; the compiler module decides", e);
    wantCompiler(false); // start() decides once it has started
  });
  const resp = await fetch("rules.json");
  if (!resp.ok) throw new Error(`fetching rules.json: ${resp.status} ${resp.statusText}`);
  // Reading rules.json (megabytes) is a long task: after the first
  // case's decision, which needs none of it.
  await firstSettled;
  const served = await resp.json();
  // The page is built in parts, each a task of its own, so that the
  // engine's answer, a key or a paint can come between.
  await yieldToPage();
  const built = performance.now();
  st.ws = new Workspace(served.files);
  st.parsed = served.parsed;
  st.planRefs = new Set(served.plans?.refs ?? []);
  st.described = served.described ?? {};
  st.source = served.source;
  st.revision = served.revision ?? "";
  selectRef(st, st.ws.newest("jax") ?? st.ws.refs[0]);

  fillRuleSets();
  $("ruleset").addEventListener("change", async () => { await chooseRef($("ruleset").value); schedule(); });
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
  // Escape puts away what the page opened last: the grid's steps, then a
  // message.
  document.addEventListener("keydown", (e) => {
    if (e.key !== "Escape" || e.defaultPrevented) return;
    if (grid.close()) return e.preventDefault();
    if (!$("message").hidden) hideMessage();
  });
  window.addEventListener("hashchange", async () => {
    if (location.hash === st.writtenHash) return;
    await readLink();
    schedule();
  });

  await yieldToPage();
  await chooseRef(st.ref);
  showInput(JSON.stringify(examples[0].input));
  await readLink();
  performance.mark("dlroute:page");
  performance.measure("dlroute:build-page", { start: built, end: "dlroute:page" });
  loadInterop(); // the question's answer needs no engine
  const early = adoptFirst(takeFirst(), served);
  if (!early) showServed(served.first);
  servedShown();
  st.plans = await plans.catch(() => null);
  // A live server may have published other rules between plans.bin and
  // rules.json: take the plans rules.json names.
  if (st.plans && served.live && served.plans && st.plans.etag !== served.plans.etag) await st.plans.follow("plans.bin", served.plans.etag).catch(() => (st.plans = null));
  if (!st.plans || st.ws.edits.size || asked) await wantCompiler(false);
  if (asked) await chooseAsked(asked);
  st.booted = true;
  performance.mark("dlroute:ready");
  // The decision adopted stands where nothing changed since (a key typed
  // while the page was built, other plans rules.json named).
  if (early && st.plans?.etag === early.etag && st.ref === early.ref && st.inputText === early.input && !st.ws.edits.size) decided();
  else await refresh();
  $("status").textContent = statusText(st.source, st.revision, st.engine?.wasm ?? st.plans?.wasm);
  if (served.live) followRules(st, rulesReloaded);
}

// yieldToPage ends the task it is awaited in; what follows runs in
// another, after what the page had waiting.
function yieldToPage() {
  return globalThis.scheduler?.yield ? scheduler.yield() : new Promise((ok) => setTimeout(ok, 0));
}

// wantCompiler starts the compiler module (dlroute.wasm, the engine that
// compiles rules from their text and runs their tests) in a worker of
// its own, once, and a second instance of it for the tests (st.idle):
// when an edit, a link with edits, ?ruleset= or the tests need it, or
// the page has no plans. When it has started it decides from then on,
// and, with decideAgain, decides again (the edit, the tests). It answers
// the start's promise.
let compilerStarted = null;
let servedShown; // resolves once start() has read rules.json and shown the server's decision
const shown = new Promise((ok) => (servedShown = ok));
function wantCompiler(decideAgain = true) {
  if (!compilerStarted) performance.mark("dlroute:compiler-asked");
  compilerStarted ??= Engine.start(startWorker("start", ["dlroute.wasm"]), st.plans ? "compiler-" : "").then(async (engine) => {
    await shown; // the rules it loads, and the server's decision first
    engine.setParsed(st.parsed);
    st.engine = st.ws.engine = engine;
    idleStarted = engine.adopt().then(async (e) => {
      await e.setParsed(st.parsed);
      return (st.idle = st.ws.twin(e));
    });
    $("status").textContent = statusText(st.source, st.revision, engine.wasm);
    if (decideAgain) schedule();
    return engine;
  });
  compilerStarted.catch((e) => {
    console.error(e);
    showMessage(`The compiler module could not start (${e.message}); the rules cannot be edited or tested. Reload the page; the link keeps your edits.`, "error");
  });
  return compilerStarted;
}

installAPI(st, exclusive, {
  compiler: () => wantCompiler(),
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
