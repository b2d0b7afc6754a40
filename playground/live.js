// Live rules: when `dlroute playground --rules DIR` serves the page, the
// server puts every change of DIR through the gate every host uses
// (compile, then the tests) and tells the page, by server-sent events on
// /events, of each version that passed and each that was refused. The
// page then loads the new rules.json and keeps the person's edits
// (Workspace.rebase), or says why the change was refused while the rules
// it has keep deciding. See playground/live.go for the events.

import { h, rulesPath } from "./views.js";

const $ = (id) => document.querySelector(`[data-testid="${id}"]`);

// followRules listens to the server's events. st is the page's state
// (state.js): st.revision names the rules the page has, st.ws holds them,
// st.refusal the change refused last; reloaded(report) is called after
// each rebase that changed a file, to show the new rules.
export function followRules(st, reloaded) {
  const events = new EventSource("events");
  let pulling = null; // the fetch in progress: events wait for it
  events.addEventListener("rules", (e) => {
    const { revision } = JSON.parse(e.data);
    st.refusal = null;
    showRefusal(null);
    if (revision === st.revision) return;
    pulling = (pulling ?? Promise.resolve()).then(() => pull(st, revision, reloaded)).catch((err) => {
      console.error(err);
      show("error", `The rules changed on the server, but the page could not load them: ${err.message}. Reload the page; the link keeps your edits.`);
    }).finally(() => { pulling = null; });
  });
  events.addEventListener("refused", (e) => {
    st.refusal = JSON.parse(e.data);
    showRefusal(st.refusal, st.revision);
  });
  return events;
}

// pull fetches rules.json and rebases the workspace on it, unless the
// page already has that revision.
async function pull(st, revision, reloaded) {
  if (revision === st.revision) return;
  const resp = await fetch("rules.json", { cache: "no-cache" });
  if (!resp.ok) throw new Error(`fetching rules.json: ${resp.status} ${resp.statusText}`);
  const served = await resp.json();
  if (served.revision === st.revision) return;
  // The plans of the new rules, where the decision module decides; where
  // they cannot be had, the compiler module decides from now on.
  if (st.plans && !st.engine) {
    try {
      if (!served.plans) throw new Error("the new rules have no plans");
      await st.plans.follow("plans.bin", served.plans.etag);
    } catch (err) {
      console.error(err);
      st.plans = null;
    }
  }
  st.planRefs = new Set(served.plans?.refs ?? []);
  st.described = served.described ?? {};
  st.parsed = served.parsed;
  st.engine?.setParsed(served.parsed);
  st.idle?.engine.setParsed(served.parsed);
  const report = st.ws.rebase(served.files);
  st.revision = served.revision;
  const touched = report.changed.length + report.added.length + report.removed.length;
  if (touched) reloaded(report);
  showReload(served, report);
}

function showReload(served, report) {
  const parts = [];
  const list = (paths) => paths.join(", ");
  if (report.changed.length) parts.push(`changed: ${list(report.changed)}`);
  if (report.added.length) parts.push(`added: ${list(report.added)}`);
  if (report.removed.length) parts.push(`removed: ${list(report.removed)}`);
  const time = new Date().toLocaleTimeString();
  const lines = [h("span", { "data-testid": "live-summary" },
    `Reloaded ${served.source}, revision ${served.revision}, at ${time}${parts.length ? ` (${parts.join("; ")})` : " (no file changed)"}.`)];
  if (report.conflicts.length) {
    lines.push(h("span", { "data-testid": "live-conflicts" },
      `Your edits to ${list(report.conflicts)} are kept; the file changed on the server too, and Revert file shows the server's version.`));
  }
  if (report.kept.length) {
    lines.push(h("span", {}, `${list(report.kept)} is gone from the server; your edited copy stays in the page (Download rules keeps it).`));
  }
  show(report.conflicts.length || report.kept.length ? "warn" : "info", ...lines);
}

// showRefusal shows why the server refused a change, or hides the
// refusal: the page's rules, revision rev, keep deciding.
function showRefusal(ref, rev) {
  if (!ref) {
    if ($("live").dataset.kind === "error") $("live").hidden = true;
    return;
  }
  const errors = (ref.errors ?? []).map((e) => h("li", {},
    h("code", {}, e.position ? `${rulesPath(e.position.file)}:${e.position.line}:${e.position.column}` : e.code), " ", e.message,
    e.source ? h("pre", {}, e.source) : null,
    e.hint ? h("div", { class: "hint" }, `hint: ${e.hint}`) : null));
  const more = ref.errors?.length ? null : h("pre", {}, ref.reason);
  show("error",
    h("span", { "data-testid": "live-refusal" },
      `A change to ${ref.origin} was refused at the ${ref.stage} step (${ref.code}); the page keeps deciding with revision ${rev}. Fix it there and save: the page loads it once it passes.`),
    errors.length ? h("ol", { "data-testid": "live-errors", class: "live-errors" }, errors) : more);
}

function show(kind, ...children) {
  const box = $("live");
  box.replaceChildren(h("div", { class: "live-body" }, children),
    h("button", { class: "link", "aria-label": "dismiss", onclick: () => (box.hidden = true) }, "×"));
  box.dataset.kind = kind;
  box.hidden = false;
}
