// Workspace is the rules directory a person works on: the files as served,
// their edits, and the module's handles for both. It loads as little as
// it can: a version and what it imports, once as served and once per
// edit (playground/RATIONALE.md, "Why does the page load only the version being
// edited?").

export const dirOf = (ref) => ref.replace("@", "/");

export class Workspace {
  // served maps "jax/v3/rules.yaml" to its text.
  constructor(served) {
    this.originals = new Map(Object.entries(served));
    this.edits = new Map(); // only files that differ from the served ones
    this.refs = refsOf(this.originals);
    this.engine = null;
    this.reset();
  }

  // rebase makes served the rules as served, when the server reloaded
  // them, and keeps the person's edits: an edit that now reads as served
  // is no longer one; an edit of a file that changed on the server too
  // stays, and is a conflict; an edited file the server no longer has
  // stays as it was served. It returns the paths that were changed,
  // added, removed, in conflict and kept; with none changed, added or
  // removed, nothing else happens. The handles of the old rules are
  // released.
  rebase(served) {
    const next = new Map(Object.entries(served));
    const report = { changed: [], added: [], removed: [], conflicts: [], kept: [] };
    for (const [p, text] of next) {
      if (!this.originals.has(p)) report.added.push(p);
      else if (this.originals.get(p) !== text) report.changed.push(p);
    }
    for (const [p, text] of this.originals) {
      if (next.has(p)) continue;
      if (this.edits.has(p)) {
        next.set(p, text);
        report.kept.push(p);
      } else {
        report.removed.push(p);
      }
    }
    if (!report.changed.length && !report.added.length && !report.removed.length) return report;
    for (const p of report.changed) {
      if (!this.edits.has(p)) continue;
      if (this.edits.get(p) === next.get(p)) this.edits.delete(p);
      else report.conflicts.push(p);
    }
    this.#drop();
    for (const { handle } of this.served.values()) if (handle) this.engine?.release(handle); // answered in order: no need to wait
    this.reset();
    this.originals = next;
    this.refs = refsOf(next);
    return report;
  }

  // twin is this workspace for another engine instance: the same files
  // and edits, read from this one as they change, with handles of its own.
  twin(engine) {
    const t = new Workspace({});
    for (const k of ["originals", "edits", "refs"]) {
      Object.defineProperty(t, k, { get: () => this[k], set: (v) => { this[k] = v; } });
    }
    t.engine = engine;
    t.reset();
    return t;
  }

  // reset forgets every handle: for a new engine instance.
  reset() {
    this.served = new Map(); // ref -> {handle, errors}
    this.edited = { key: "", handle: 0, errors: null }; // the last load of edited rules
  }

  // newest is the default version of a rule set's name.
  newest(name) { return this.refs.filter((r) => r.startsWith(name + "@")).pop(); }

  textOf(path) { return this.edits.has(path) ? this.edits.get(path) : this.originals.get(path); }

  filesOf(ref) { return [...this.originals.keys()].filter((p) => p.startsWith(dirOf(ref) + "/")); }

  // edit records a file's new text; the served text again is no edit.
  edit(path, text) {
    if (text === this.originals.get(path)) this.edits.delete(path);
    else this.edits.set(path, text);
  }

  // all is every file, as edited.
  all() { return new Map([...this.originals.keys()].map((p) => [p, this.textOf(p)])); }

  // closure is a ref and everything it imports, as the files now read.
  closure(ref) {
    const seen = new Set();
    const stack = [ref];
    while (stack.length) {
      const r = stack.pop();
      if (seen.has(r) || !this.refs.includes(r)) continue;
      seen.add(r);
      stack.push(...importsOf(this.textOf(`${dirOf(r)}/rules.yaml`)));
    }
    return [...seen].sort();
  }

  // editedPaths are the edited files the ref reads.
  editedPaths(ref) {
    const dirs = this.closure(ref).map((r) => dirOf(r) + "/");
    return [...this.edits.keys()].filter((p) => dirs.some((d) => p.startsWith(d)));
  }

  // resolve returns {ref} for a ref as every host reads one: "jax" (its
  // newest version), "jax@v1.1", or "jax==0.10.2", the version whose
  // manifest covers that release, which the module answers with every
  // version of the name loaded (rules/README.md); or {error}, the module's
  // message and hint (for a release, the versions nearest to it).
  async resolve(asked) {
    const name = asked.split(/==|@/)[0];
    const refs = this.refs.filter((r) => r.startsWith(name + "@"));
    if (!refs.length) return { error: `no rule set "${name}"; these rules have ${[...new Set(this.refs.map((r) => r.split("@")[0]))].join(", ")}` };
    const paths = [...new Set(refs.flatMap((r) => this.closure(r)))].flatMap((x) => this.filesOf(x));
    const loaded = await this.engine.load(paths.map((p) => [p, this.originals.get(p)]));
    if (!loaded.ok) return { error: `the rules of ${name} did not load` };
    const rs = await this.engine.ruleset(asked);
    if (rs.error) {
      const e = rs.error.json();
      return { error: e.hint ? `${e.message} (${e.hint})` : e.message };
    }
    return { ref: (await this.engine.describe(rs.handle)).json().ref };
  }

  // original returns {handle, errors} for a ref as served, loading it
  // (and what it imports) the first time, lazily: the version is compiled
  // without its tests, which the first test of the handle compiles
  // (dlroute_load_lazy). Handles outlive later loads.
  async original(ref) {
    if (!this.served.has(ref)) {
      const refs = this.closure(ref);
      const r = await this.engine.loadLazy(refs.flatMap((x) => this.filesOf(x)).map((p) => [p, this.originals.get(p)]));
      if (!r.ok) {
        this.served.set(ref, { handle: 0, errors: r.json() });
      } else {
        for (const x of refs) {
          if (this.served.get(x)?.handle) continue;
          const rs = await this.engine.ruleset(x);
          this.served.set(x, rs.error ? { handle: 0, errors: errorList(rs.error.json()) } : { handle: rs.handle, errors: null });
        }
      }
    }
    return this.served.get(ref);
  }

  // current returns {handle, errors} for a ref as edited: the served
  // handle when nothing it reads is edited, else a load of the edited
  // files, kept until they change. The previous edit's handle is released.
  async current(ref) {
    const paths = this.closure(ref).flatMap((x) => this.filesOf(x));
    if (!paths.some((p) => this.edits.has(p))) {
      this.#drop();
      return this.original(ref);
    }
    const key = JSON.stringify([ref, paths.map((p) => [p, this.textOf(p)])]);
    if (key !== this.edited.key) {
      const r = await this.engine.load(paths.map((p) => [p, this.textOf(p)]));
      const rs = r.ok ? await this.engine.ruleset(ref) : null;
      this.#drop();
      this.edited = !r.ok ? { key, handle: 0, errors: r.json() } : rs.error ? { key, handle: 0, errors: errorList(rs.error.json()) } : { key, handle: rs.handle, errors: null };
    }
    return this.edited;
  }

  // #drop releases the edited rules' handle, unless it is also a served
  // one (the module hands out one handle per compiled version, and reuses
  // a version that did not change).
  #drop() {
    const h = this.edited.handle;
    if (h && ![...this.served.values()].some((s) => s.handle === h)) this.engine.release(h);
    this.edited = { key: "", handle: 0, errors: null };
  }
}

// errorList is a ruleset's error as a list: load_error's list of the
// version that did not compile, or the one error.
const errorList = (e) => (Array.isArray(e) ? e : [e]);

// refsOf lists the versions, "jax@v3", of a map of rule files, in order.
function refsOf(files) {
  return [...new Set([...files.keys()].map((p) => p.split("/").slice(0, 2).join("@")))].sort(byVersion.compare);
}

// byVersion orders refs as a person reads versions (v1.10 after v1.2):
// one collator for every comparison, as localeCompare with options makes
// a new one each call, which took tens of milliseconds of the page's
// start.
const byVersion = new Intl.Collator("en", { numeric: true });

// importsOf reads the refs a rules.yaml imports: name@version tokens in
// its top-level imports block. A miss costs a load error the engine
// reports; an extra costs a few more files loaded.
export function importsOf(text = "") {
  const lines = text.split("\n");
  const start = lines.findIndex((l) => /^imports\s*:/.test(l));
  if (start < 0) return [];
  let body = lines[start];
  for (let i = start + 1; i < lines.length && (/^\s/.test(lines[i]) || lines[i].trim() === "" || lines[i].startsWith("#")); i++) {
    body += "\n" + lines[i].replace(/#.*/, "");
  }
  return [...body.replace(/#.*/, "").matchAll(/([A-Za-z0-9_-]+)@(v[0-9][0-9.]*)/g)].map((m) => m[0]);
}
