// The page's state: every value the playground keeps between events,
// declared here in one record. The record is sealed, so a module that
// writes a field this file does not declare throws instead of growing the
// state unseen. A change that touches more than one field is a function
// below; a module sets alone only the fields noted as its own (app.js the
// engine and the rules when they load, files.js the open file, link.js
// the fragment it wrote, live.js the revision and the refusal). The
// record holds data, not views: the editors, the form and the timers
// belong to the modules that draw them (files.js, form.js, app.js).
// Nothing here touches the page, so test/state.test.mjs runs it in Node.

// newState returns the state of a page that has not loaded yet.
export function newState() {
  return Object.seal({
    // The engine and the rules it has.
    engine: null, // app.js: the Engine (engine.js) of the compiler module, once it has started (app.js wantCompiler)
    plans: null, // app.js, live.js: the decision module (first.js, plans.js Decisions), null where it has none or it failed
    planRefs: null, // app.js, live.js: the versions the plans hold (rules.json's plans.refs)
    described: null, // app.js, live.js: every version's dlroute_describe by ref (rules.json's described)
    parsed: null, // app.js, live.js: rules.json's parsed, for every load of the compiler module
    booted: false, // app.js: the page has started: a change the plans cannot decide starts the compiler module
    ws: null, // app.js: the Workspace (workspace.js), the files as served and as edited
    idle: null, // app.js: the Workspace's twin on the second engine, for the tests and what changed; null until it starts
    source: "", // app.js: where the rules come from, as rules.json says ("embedded", a directory)
    revision: "", // app.js, live.js: the rules' revision, rules.json's, then each a live server publishes
    refusal: null, // live.js: the change a live server refused last, or null

    // What the person looks at.
    ref: "", // the rule set's version looked at, "jax@v3"
    active: "", // files.js: the path of the open file, "jax/v3/rules.yaml"
    wantFile: "", // app.js sets it, files.js takes it: the file a link asks to open once the editors are built, or ""
    inputText: "", // the input as the JSON line the engine gets

    // The last decision, and what it left to show.
    handle: 0, // the handle of the rules the last decision used; 0: they did not load
    problems: [], // the errors of the last decision: the rules' load errors, or its eval error
    lastGood: null, // the last decision made: {explanation, input, ref, ms}, and served: true for the server's
    served: null, // app.js: rules.json's "first" while it is the decision shown, for the engine's to be checked against
    revealRule: false, // a new input: show the rule that decides it in the editor
    shownRule: "", // the rule revealed last, so an edit does not scroll to it again

    // The tests, run once per handle.
    testedHandle: undefined, // the handle the report is for; undefined: none run yet
    testReport: null, // its dlroute_test report, or null when the rules did not load

    // The change being decided, for the page's performance measures.
    changeAt: undefined, // when the first change since the last decision was made
    changeKind: "", // what changed: "rules", "input", "other", or "" for no change

    // The share link.
    keepHash: false, // app.js: leave a link that did not read in the address bar (noteChange clears it)
    writtenHash: "", // link.js: the fragment the page wrote last, to ignore its own hashchange

    // Figures for window.dlroute.timings().
    timings: { edits: [], first: undefined, last: undefined }, // edits: each change to its decision, {kind, ms, ...parts}; first, last: a refresh's parts (timings.js)
  });
}

// selectRef makes ref the version looked at. Its tests have not run.
export function selectRef(st, ref) {
  st.ref = ref;
  st.testedHandle = undefined;
}

// setInput makes text the input, and the next decision show the rule
// that decides it.
export function setInput(st, text) {
  st.inputText = text;
  st.revealRule = true;
}

// noteChange records that the person changed kind ("rules", "input", or
// "other") at now; changes of two kinds before one decision are "other".
// Any change lets the page write the link again.
export function noteChange(st, kind, now) {
  st.keepHash = false;
  st.changeAt ??= now;
  st.changeKind = st.changeKind && st.changeKind !== kind ? "other" : kind;
}

// takeChange returns the change a decision answers, {at, kind}, and
// forgets it; at is now when nothing changed (the first decision).
export function takeChange(st, now) {
  const change = { at: st.changeAt ?? now, kind: st.changeKind || "other" };
  st.changeAt = undefined;
  st.changeKind = "";
  return change;
}

// recordDecision keeps what decide() (decide.js) found.
export function recordDecision(st, outcome) {
  st.handle = outcome.handle;
  st.problems = outcome.problems;
  if (outcome.decided) st.lastGood = outcome.decided;
}

// goodDecision is the last decision, or null when it was made for another
// version than the one looked at.
export function goodDecision(st) {
  return st.lastGood?.ref === st.ref ? st.lastGood : null;
}

// testsDue says whether the tests must run for the current handle.
export function testsDue(st) {
  return st.handle !== st.testedHandle;
}

// recordTests keeps the report of the tests of handle, the current one
// unless the tests ran for another.
export function recordTests(st, report, handle = st.handle) {
  st.testedHandle = handle;
  st.testReport = report;
}

// forgetTests makes the tests run again after the next decision: for a
// new engine instance, or rules reloaded, whose handles may be numbered
// as the old ones were.
export function forgetTests(st) {
  st.testedHandle = undefined;
}

// nextReveal returns the rule to reveal in the editor for a decision
// made on a new input, or "" for none: an edit leaves the editor where
// the person is typing, and the same rule is not revealed twice running.
export function nextReveal(st, rule) {
  if (!st.revealRule) return "";
  st.revealRule = false;
  const shown = st.shownRule;
  st.shownRule = rule ?? "";
  return rule && rule !== shown ? rule : "";
}
