// What the page shows of an answer: the decision, its trace, the tests
// and what changed. Each function fills an element from the module's JSON,
// with textContent only (rule files and inputs are never HTML).

// h makes an element: h("li", {class: "pass", "data-rule": "gpu"}, child, "text", ...).
export function h(tag, attrs = {}, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === null || v === false) continue;
    if (k === "class") e.className = v;
    else if (k.startsWith("on")) e.addEventListener(k.slice(2), v);
    else e.setAttribute(k, v === true ? "" : v);
  }
  e.append(...children.flat().filter((c) => c !== undefined && c !== null && c !== false));
  return e;
}

// rulesPath turns an engine position's file ("rules/jax/v3/rules.yaml")
// into the page's path ("jax/v3/rules.yaml").
export function rulesPath(file) {
  return file.split("/").slice(-3).join("/");
}

export function where(pos) {
  return `${pos.file.split("/").pop()}:${pos.line}:${pos.column}`;
}

// verdict is a decision in a line: (kDLCUDA, 0) or BufferError: ...
export function verdict(d) {
  if (!d) return "";
  if (d.error) return `${d.error.type}: ${d.error.message}`;
  return `(${d.device_type}, ${d.device_id})`;
}

// renderDecision fills the decision panel. stale, when set, says why the
// decision shown is the last good one rather than the current input's.
//
// served says the decision is the server's (rules.json "first"), shown
// while the page's engine starts.
export function renderDecision(root, { explanation, ms, served, stale, onRule }) {
  root.replaceChildren();
  if (!explanation) {
    root.dataset.state = "none";
    root.append(h("h2", {}, "Decision"), h("p", { class: "muted" }, stale || "No decision yet."));
    return;
  }
  const d = explanation.decision;
  root.dataset.state = stale ? "stale" : "fresh";
  root.dataset.by = served ? "server" : "page";
  root.dataset.rule = d.rule;
  root.dataset.kind = d.error ? "exception" : "device";
  const step = explanation.trace.rules.find((s) => s.rule === d.rule && s.matched);
  const exportBits = [];
  if (d.copy) exportBits.push(h("span", { class: "chip" }, "copy"));
  if (d.capsule) exportBits.push(h("span", { class: "chip" }, d.capsule));
  for (const f of d.flags || []) exportBits.push(h("span", { class: "chip" }, f.replace("DLPACK_FLAG_BITMASK_", "")));
  root.append(...[
    h("h2", {}, "Decision", stale ? h("span", { class: "badge warn" }, "last good") : null),
    h("div", { class: `verdict ${d.error ? "exception" : "device"}`, "data-testid": "verdict" },
      d.error ? [h("span", { class: "exc" }, d.error.type), ": ", d.error.message] : [`(${d.device_type}, ${d.device_id})`, h("span", { class: "code" }, ` device type ${d.device_type_code}`)]),
    exportBits.length ? h("div", { class: "export" }, ...exportBits) : null,
    h("div", { class: "meta" },
      "rule ", h("button", { class: "link", "data-testid": "decision-rule", onclick: () => step && onRule(step.position) }, d.rule),
      ` of ${d.ruleset}`, step ? ` at ${where(step.position)}` : "",
      served ? h("span", { class: "muted" }, " · decided by the server while the page's engine starts") : null,
      ms !== undefined ? h("span", { class: "muted" }, ` · explained in ${ms.toFixed(1)} ms`) : null),
    stale ? h("p", { class: "stale-note" }, stale) : null,
    h("details", {}, h("summary", {}, "As dlroute resolve --json writes it"), h("pre", { class: "json" }, JSON.stringify(d))),
  ].filter(Boolean));
}

// renderTrace fills the trace panel: rules tried, the values (with the
// import's own trace), and where the marker matched in platform_version.
// textOf(path) is a rule file's text as the page has it, where the trace
// names the marker rows tried.
export function renderTrace(root, { explanation, input, onPosition, textOf = () => undefined }) {
  root.replaceChildren(h("h2", {}, "Trace"));
  if (!explanation) return;
  const marker = findMarker(explanation.trace, input);
  if (marker) root.append(markerView(marker));
  const missed = marker ? null : markersTried(explanation.trace, input, textOf);
  if (missed) root.append(missedView(missed, onPosition));
  root.append(traceView(explanation.trace, onPosition, 0));
}

// markersTried finds a list of marker rows that matched nothing (a value
// such as gpu_matches: gpu_markers.filter(m, platform_version.contains(m.marker))
// that is empty), in the trace or an import's, and reads the table it
// filters in its rule file: {value, table, markers, path, lastLine,
// version}, or null.
export function markersTried(trace, input, textOf) {
  for (const v of trace.values) {
    if (v.import) {
      const m = markersTried(v.import.trace, input, textOf);
      if (m) return m;
    }
    if (!Array.isArray(v.value) || v.value.length !== 0 || !v.position) continue;
    const path = rulesPath(v.position.file);
    const text = textOf(path);
    if (!text) continue;
    const lines = text.split("\n");
    const expr = lines[v.position.line - 1] ?? "";
    const table = /([A-Za-z_][A-Za-z0-9_]*)\.filter\(\s*\w+\s*,[^)]*\.marker/.exec(expr)?.[1];
    if (!table) continue;
    const rows = tableRows(lines, table);
    if (!rows.length) continue;
    const version = typeof input?.platform_version === "string" ? input.platform_version : "";
    return { value: v.name, table, markers: rows.map((r) => r.marker), path, lastLine: rows.at(-1).line, lastText: rows.at(-1).text, version };
  }
  return null;
}

// tableRows reads the marker rows of a table in a rules.yaml: the
// `marker:` of each row under `<table>:`, up to the next table.
function tableRows(lines, table) {
  const start = lines.findIndex((l) => new RegExp(`^\\s+${table}:\\s*$`).test(l));
  if (start < 0) return [];
  const indent = lines[start].length - lines[start].trimStart().length;
  const rows = [];
  for (let i = start + 1; i < lines.length; i++) {
    const t = lines[i];
    if (t.trim() && !t.trim().startsWith("#") && t.length - t.trimStart().length <= indent) break;
    const m = /^\s*-\s*\{\s*marker:\s*['"]?([^,'"}]+)['"]?/.exec(t);
    if (m) rows.push({ marker: m[1].trim(), line: i + 1, text: t });
  }
  return rows;
}

function missedView(m, onPosition) {
  const indent = m.lastText.slice(0, m.lastText.length - m.lastText.trimStart().length);
  const shownVersion = m.version.length > 80 ? `${m.version.slice(0, 80)}…` : m.version;
  return h("div", { class: "marker missed", "data-testid": "markers-tried" },
    h("p", {}, `No marker matched: platform_version ${JSON.stringify(shownVersion)} contains none of the ${m.markers.length} markers ${m.table} tries, in order: `,
      m.markers.flatMap((k, i) => [i ? ", " : "", h("code", {}, k)]), `. So ${m.value} is empty, and JAX raises the unknown-platform error.`),
    h("p", {}, "The fix, if this platform is a GPU that JAX can export: add a row for it to ", h("code", {}, m.table), " in ",
      h("button", { class: "link", "data-testid": "markers-fix-line", onclick: () => onPosition({ file: m.path, line: m.lastLine, column: indent.length + 1 }) }, `${m.path.split("/").pop()}:${m.lastLine}`),
      ", after its last row, naming a word of your platform_version and the device type it exports as:"),
    h("pre", { class: "version", "data-testid": "markers-fix" }, `${indent}- {marker: <a word of platform_version>, device: kDLCUDA}`),
    h("p", { class: "muted" }, "then add a case for it to tests.yaml, so that the tests pin what it decides."));
}

function traceView(trace, onPosition, depth) {
  const rules = h("ol", { class: "rules" }, trace.rules.map((s) =>
    h("li", { class: s.error ? "fail" : s.matched ? "hit" : "miss", "data-rule": s.rule },
      h("span", { class: "mark" }, s.error ? "!" : s.matched ? "✓" : "✗"),
      h("button", { class: "link", onclick: () => onPosition(s.position) }, s.rule),
      h("span", { class: "pos" }, where(s.position)),
      s.error ? h("div", { class: "err-text" }, s.error) : null)));
  // A value the decision did not read is not its concern: shown muted,
  // and one that failed is "not needed", not an error; only a failure of
  // a value the decision read is an error.
  const values = h("dl", { class: "values" }, trace.values.flatMap((v) => [
    h("dt", { class: v.used ? "used" : "unused", title: v.used ? "the decision read it" : "not needed: the decision did not read it" },
      v.position ? h("button", { class: "link", onclick: () => onPosition(v.position) }, v.name) : v.name),
    h("dd", { class: v.used ? (v.error ? "err-text" : "used") : v.error ? "unused not-needed" : "unused", "data-value": v.name },
      v.error ? (v.used ? `error: ${v.error}` : `not needed (it would fail: ${v.error})`) : JSON.stringify(v.value),
      v.import ? h("details", { class: "import", open: depth === 0 }, h("summary", {}, `how ${v.import.decision.ruleset} decided: ${verdict(v.import.decision)}`),
        traceView(v.import.trace, onPosition, depth + 1)) : null),
  ]));
  return h("div", { class: "trace-body" }, h("h3", {}, "Rules tried, top to bottom"), rules, h("h3", {}, "Values"), values);
}

// findMarker finds the marker row that matched: a value that is a list of
// rows with a "marker" column (gpu_matches), in the trace or an import's,
// and where it starts in platform_version.
export function findMarker(trace, input) {
  for (const v of trace.values) {
    if (Array.isArray(v.value) && v.value.length > 0 && typeof v.value[0]?.marker === "string") {
      const marker = v.value[0].marker;
      const version = typeof input?.platform_version === "string" ? input.platform_version : "";
      return { value: v.name, marker, version, at: version.indexOf(marker) };
    }
    if (v.import) {
      const m = findMarker(v.import.trace, input);
      if (m) return m;
    }
  }
  return null;
}

function markerView(m) {
  const before = m.version.slice(0, Math.max(0, m.at));
  const line = before.split("\n").length;
  const column = before.length - before.lastIndexOf("\n");
  const shown = (s) => s.split("\n").flatMap((part, i) => (i ? [h("span", { class: "nl" }, "⏎"), "\n", part] : [part]));
  return h("div", { class: "marker", "data-testid": "marker" },
    h("div", {}, "Marker ", h("code", {}, m.marker), ` (${m.value}[0]) matched platform_version at offset ${m.at}, line ${line}, column ${column}:`),
    h("pre", { class: "version" }, shown(before), h("mark", {}, m.marker), shown(m.version.slice(m.at + m.marker.length))));
}

// ruleMarks computes the marks for one rule file from a trace: the rule
// that decided (its whole block), the rules tried, the values read, and the
// marker row that matched.
export function ruleMarks(path, text, explanation, input) {
  const lines = new Map();
  const spans = [];
  if (!explanation) return { lines, spans };
  const fileLines = text.split("\n");
  const visit = (trace) => {
    for (const s of trace.rules) {
      if (rulesPath(s.position.file) !== path) continue;
      if (s.matched || s.error) {
        const [from, to] = block(fileLines, s.position);
        for (let l = from; l <= to; l++) lines.set(l, s.error ? "fail" : "hit");
      } else if (!lines.has(s.position.line)) {
        lines.set(s.position.line, "tried");
      }
    }
    for (const v of trace.values) {
      if (v.used && v.position && rulesPath(v.position.file) === path && !lines.has(v.position.line)) lines.set(v.position.line, "value");
      if (v.import) visit(v.import.trace);
    }
  };
  visit(explanation.trace);
  const m = findMarker(explanation.trace, input);
  if (m) {
    const re = new RegExp(`marker:\\s*['"]?(${m.marker.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")})['"]?\\s*[,}]?`);
    fileLines.forEach((t, i) => {
      const found = re.exec(t);
      if (found && !t.trimStart().startsWith("#")) {
        lines.set(i + 1, "marker");
        const at = t.indexOf(found[1], found.index);
        spans.push({ line: i + 1, column: byteLength(t.slice(0, at)) + 1, length: byteLength(found[1]), cls: "marker" });
      }
    });
  }
  return { lines, spans };
}

// block is the lines of the list item that starts at pos: up to the next
// line indented no deeper than its key, blank lines at its end left out.
function block(fileLines, pos) {
  const indent = pos.column - 1;
  let to = pos.line;
  for (let l = pos.line + 1; l <= fileLines.length; l++) {
    const t = fileLines[l - 1];
    if (t.trim() === "" || t.trim().startsWith("#")) continue;
    if (t.length - t.trimStart().length < indent) break;
    to = l;
  }
  return [pos.line, to];
}

function byteLength(s) {
  return new TextEncoder().encode(s).length;
}

// renderTests fills the tests panel from dlroute_test's report (null: the
// rules did not load). The panel's data-state, which its colour follows,
// is "pass", "fail", or "none" for no tests run: an error, not a pass.
// renderTestsOffer fills the tests panel before the compiler module,
// which runs the tests, has started: the page decides with plans, which
// hold no tests; run() starts it, and the tests run when it has.
export function renderTestsOffer(panel, run) {
  panel.dataset.state = "offer";
  const summary = panel.querySelector('[data-testid="tests-summary"]');
  summary.textContent = "not run yet";
  summary.dataset.passed = "";
  summary.dataset.failed = "";
  const button = h("button", { class: "link", "data-testid": "run-tests", onclick: () => {
    button.disabled = true;
    summary.textContent = "loading the compiler module…";
    run();
  } }, "Run the tests");
  panel.querySelector('[data-testid="tests-list"]').replaceChildren(h("li", {}, button,
    h("span", { class: "muted" }, " (they run in the compiler module, which loads when you edit the rules or ask)")));
}

export function renderTests(panel, report, { onCase, onPosition }) {
  const summary = panel.querySelector('[data-testid="tests-summary"]');
  const list = panel.querySelector('[data-testid="tests-list"]');
  if (!report) {
    panel.dataset.state = "none";
    summary.textContent = "no tests: the rules did not load";
    summary.dataset.passed = "";
    summary.dataset.failed = "";
    list.replaceChildren();
    return;
  }
  panel.dataset.state = report.failed ? "fail" : "pass";
  summary.textContent = `${report.passed} passed, ${report.failed} failed`;
  summary.dataset.passed = String(report.passed);
  summary.dataset.failed = String(report.failed);
  const cases = [...report.cases].sort((a, b) => Number(a.pass) - Number(b.pass));
  // The list is one Tab stop: the arrow keys move in it (listKeys). The
  // button that had the focus keeps it when the list is drawn again.
  const had = list.contains(document.activeElement) ? [document.activeElement.closest("li")?.dataset.case, document.activeElement.classList.contains("pos")] : null;
  list.replaceChildren(...cases.map((c) => h("li", { class: c.pass ? "pass" : "fail", "data-case": c.name },
    h("span", { class: "mark" }, c.pass ? "✓" : "✗"),
    h("button", { class: "link", tabindex: "-1", title: "decide this case's input", onclick: () => onCase(c) }, c.name),
    h("button", { class: "pos link", tabindex: "-1", onclick: () => onPosition(c.position) }, where(c.position)),
    c.pass ? null : h("div", { class: "gotwant" },
      h("div", {}, h("b", {}, "got "), c.error ? `error: ${c.error.message}` : JSON.stringify(c.got)),
      h("div", {}, h("b", {}, "want "), JSON.stringify(c.want))))));
  const keep = had && [...list.children].find((li) => li.dataset.case === had[0])?.querySelectorAll("button")[had[1] ? 1 : 0];
  const stop = keep ?? list.querySelector("button");
  if (stop) stop.tabIndex = 0;
  if (keep) keep.focus({ preventScroll: true });
  list.onkeydown = listKeys;
}

// listKeys moves the focus in the tests list, as in the interop grid:
// ArrowUp and ArrowDown between cases, ArrowLeft and ArrowRight between a
// case's name and its position, Home and End to the first and last case.
function listKeys(e) {
  const b = e.target.closest?.("button");
  const li = b?.closest("li");
  if (!li) return;
  const items = [...e.currentTarget.children];
  const i = items.indexOf(li), col = b.classList.contains("pos") ? 1 : 0;
  const to = { ArrowUp: [i - 1, col], ArrowDown: [i + 1, col], ArrowLeft: [i, 0], ArrowRight: [i, 1], Home: [0, col], End: [items.length - 1, col] }[e.key];
  if (!to) return;
  e.preventDefault();
  const next = items[Math.max(0, Math.min(items.length - 1, to[0]))]?.querySelectorAll("button")[to[1]];
  if (!next) return;
  for (const x of e.currentTarget.querySelectorAll("button[tabindex='0']")) x.tabIndex = -1;
  next.tabIndex = 0;
  next.focus();
}

// renderProblems lists load and evaluation errors, each a link to its place.
export function renderProblems(root, errors, onPosition) {
  root.replaceChildren(...errors.map((e) => h("div", { class: "problem", "data-code": e.code },
    e.position ? h("button", { class: "link pos", onclick: () => onPosition(e.position) }, `${e.position.file}:${e.position.line}:${e.position.column}`) : null,
    h("span", { class: "code" }, e.code), " ", e.message,
    e.hint ? h("div", { class: "hint" }, `hint: ${e.hint}`) : null)));
  root.hidden = errors.length === 0;
}
