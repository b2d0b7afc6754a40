// The rule files: a tab and an editor (editor.js) for each file the
// version looked at reads, its own files first and then the rules.yaml of
// each version it imports. Files owns the editors; the texts live in the
// state's Workspace, and an edit goes there first.

import { Editor } from "./editor.js";
import { dirOf } from "./workspace.js";
import { h, rulesPath, ruleMarks } from "./views.js";
import { goodDecision } from "./state.js";

const FILE_ORDER = ["rules.yaml", "tests.yaml", "device_types.yaml", "manifest.yaml"];

// tabPaths is the files shown for ref, in tab order.
export function tabPaths(ws, ref) {
  const rank = (p) => FILE_ORDER.indexOf(p.split("/")[2]);
  const own = ws.filesOf(ref).sort((a, b) => rank(a) - rank(b));
  const imported = ws.closure(ref).filter((r) => r !== ref).map((r) => `${dirOf(r)}/rules.yaml`).filter((p) => ws.originals.has(p));
  return [...own, ...imported];
}

// errorMarks are the problems positioned in path, as an editor marks them.
export function errorMarks(problems, path) {
  return problems.filter((e) => e.position && rulesPath(e.position.file) === path)
    .map((e) => ({ line: e.position.line, column: e.position.column, message: `${e.code}: ${e.message}` }));
}

export class Files {
  // st is the page's state; els holds the tab bar, the editors' host and
  // the Revert button; edited(path) is called after each edit of a file,
  // opened(path) after a file is opened.
  constructor(st, { tabs, host, revert, hint }, { edited, opened }) {
    this.st = st;
    this.els = { tabs, host, revert, hint };
    this.edited = edited;
    this.opened = opened;
    this.editors = new Map(); // path -> {ed, box}
    // The tabs are one stop for Tab; the arrow keys, Home and End move
    // between them and open the file (the ARIA tabs pattern).
    tabs.addEventListener("keydown", (e) => {
      const all = [...tabs.children];
      const at = all.indexOf(document.activeElement);
      if (at < 0) return;
      const to = { ArrowRight: at + 1, ArrowLeft: at - 1, Home: 0, End: all.length - 1 }[e.key];
      if (to === undefined) return;
      e.preventDefault();
      const tab = all[(to + all.length) % all.length];
      this.open(tab.dataset.path);
      tab.focus();
    });
  }

  // build makes the tabs and editors for st.ref, and opens the file a
  // link named, else the one open if the version has it, else its
  // rules.yaml.
  build() {
    const { st } = this;
    const paths = tabPaths(st.ws, st.ref);
    const own = (p) => p.startsWith(dirOf(st.ref) + "/");
    this.els.host.replaceChildren();
    this.els.tabs.replaceChildren();
    this.editors.clear();
    paths.forEach((path, i) => {
      const name = path.split("/")[2];
      const box = h("div", { class: "editor-box", role: "tabpanel", id: `file-${i}`, "aria-labelledby": `file-tab-${i}`, hidden: true });
      this.els.host.append(box);
      const ed = new Editor(box, { testid: own(path) ? `editor-${name}` : `editor-${path}`, label: path, describedBy: this.els.hint });
      ed.setVisible(false); // drawn when opened: only the open file's editor, below
      ed.setText(st.ws.textOf(path));
      ed.onInput((text) => {
        st.ws.edit(path, text);
        this.updateTabs();
        this.edited(path);
      });
      this.editors.set(path, { ed, box });
      this.els.tabs.append(h("button", { role: "tab", class: "tab", id: `file-tab-${i}`, "aria-controls": `file-${i}`, "data-path": path, "data-testid": `tab-${own(path) ? name : path}`, onclick: () => this.open(path) },
        own(path) ? name : `${path.split("/").slice(0, 2).join("@")} (imported) rules.yaml`));
    });
    const wanted = st.wantFile || (own(st.active) ? st.active : "");
    st.wantFile = "";
    this.open(paths.includes(wanted) ? wanted : paths.find((p) => p.endsWith("/rules.yaml")) ?? paths[0]);
  }

  // sameTabs says whether the tabs shown are the ones st.ref needs.
  sameTabs() {
    return tabPaths(this.st.ws, this.st.ref).join("\n") === [...this.editors.keys()].join("\n");
  }

  // reloadTexts shows each file's text from the workspace, after the
  // rules reloaded with the same files.
  reloadTexts() {
    for (const [path, { ed }] of this.editors) ed.setText(this.st.ws.textOf(path));
    this.updateTabs();
  }

  open(path) {
    this.st.active = path;
    for (const [p, { box, ed }] of this.editors) {
      box.hidden = p !== path;
      ed.setVisible(p === path);
    }
    this.updateTabs();
    this.opened(path);
  }

  editor(path) {
    return this.editors.get(path)?.ed;
  }

  updateTabs() {
    const { st } = this;
    const errorFiles = new Set(st.problems.filter((e) => e.position).map((e) => rulesPath(e.position.file)));
    for (const tab of this.els.tabs.children) {
      const p = tab.dataset.path;
      tab.setAttribute("aria-selected", String(p === st.active));
      tab.tabIndex = p === st.active ? 0 : -1;
      tab.classList.toggle("edited", st.ws.edits.has(p));
      tab.classList.toggle("has-error", errorFiles.has(p));
    }
    this.els.revert.disabled = !st.ws.edits.has(st.active);
  }

  // paint marks every editor: the last decision's rules and values, and
  // the problems at their lines.
  paint() {
    const good = goodDecision(this.st);
    for (const [path, { ed }] of this.editors) {
      ed.setMarks({ ...ruleMarks(path, ed.text, good?.explanation, good?.input), errors: errorMarks(this.st.problems, path) });
    }
    this.updateTabs();
  }

  // show opens a position's file, puts the caret there and focuses it.
  show(pos) {
    const path = rulesPath(pos.file);
    const ed = this.editor(path);
    if (!ed) return;
    this.open(path);
    ed.reveal(pos.line, pos.column);
    ed.focus();
  }

  // revealStep scrolls the open editor to a trace step's line, when the
  // step is in the open file; the caret stays. It waits for the next
  // frame: scrolling lays the page out, which the frame does once for the
  // decision just drawn, not inside the decision's task.
  revealStep(step) {
    const path = step && rulesPath(step.position.file);
    if (path && path === this.st.active) requestAnimationFrame(() => this.editor(path)?.reveal(step.position.line));
  }
}
