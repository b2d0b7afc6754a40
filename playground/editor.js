// Editor is a plain <textarea> with a line-number gutter and a backdrop
// that paints marks behind the text: an error's line and column, the rules
// a decision tried, the one that decided. The textarea keeps what the
// browser gives it for free (undo, selection, IME, accessibility, paste);
// the backdrop is redrawn from the text, lines that scroll by are never
// measured. playground/RATIONALE.md says why this rather than an editor from npm.

const INDENT = "  ";

// Past this size the editor stops painting line numbers and marks: a
// pasted megabyte stays editable, and the engine says it is too large.
const PAINT_MAX = 256 << 10;

export class Editor {
  // root is an element to fill; testid names the textarea for tests
  // (data-testid), label for screen readers; describedBy is the id of the
  // element that says which keys the editor takes.
  constructor(root, { testid, label, describedBy }) {
    this.root = root;
    root.classList.add("editor");
    root.innerHTML = "";
    this.gutter = el("div", "gutter");
    this.gutter.setAttribute("aria-hidden", "true");
    this.gutterInner = el("div", "gutter-inner");
    this.gutter.append(this.gutterInner);
    const code = el("div", "code");
    this.backdrop = el("div", "backdrop");
    this.backdrop.setAttribute("aria-hidden", "true");
    this.backdropInner = el("div", "backdrop-inner");
    this.backdrop.append(this.backdropInner);
    this.textarea = document.createElement("textarea");
    Object.assign(this.textarea, { spellcheck: false, wrap: "off" });
    this.textarea.setAttribute("autocapitalize", "off");
    this.textarea.setAttribute("autocomplete", "off");
    this.textarea.setAttribute("aria-label", label);
    if (describedBy) this.textarea.setAttribute("aria-describedby", describedBy);
    this.textarea.dataset.testid = testid;
    code.append(this.backdrop, this.textarea);
    root.append(this.gutter, code);

    this.marks = { lines: new Map(), spans: [], errors: [] };
    this.drawn = null; // the rows drawn last (#render), to draw only what changed
    this.visible = true;
    this.stale = false;
    this.listeners = [];
    this.textarea.addEventListener("input", () => {
      this.#render();
      for (const fn of this.listeners) fn(this.text);
    });
    this.textarea.addEventListener("scroll", () => this.#sync(true));
    this.textarea.addEventListener("keydown", (e) => this.#key(e));
    this.textarea.addEventListener("beforeinput", (e) => this.#newline(e));
    this.height = 0;
    new ResizeObserver(() => this.#keepInView(this.textarea.clientHeight)).observe(this.textarea);
    this.#render();
  }

  get text() { return this.textarea.value; }

  // setText replaces the text without telling the listeners: for loading a
  // file, not for an edit.
  setText(text) {
    if (this.textarea.value !== text) this.textarea.value = text;
    this.#render();
  }

  onInput(fn) { this.listeners.push(fn); }

  // setVisible says whether the editor is shown: a hidden one paints only
  // when it is shown again.
  setVisible(visible) {
    this.visible = visible;
    if (visible && this.stale) this.#render();
  }

  // setMarks paints marks: lines maps a line number (from 1) to a class
  // (hit, tried, value, marker); spans are {line, column, length, cls};
  // errors are {line, column, message}.
  setMarks({ lines = new Map(), spans = [], errors = [] } = {}) {
    this.marks = { lines, spans, errors };
    this.#render();
  }

  // reveal scrolls a line into the middle of the view, and puts the caret
  // at column (from 1) when given.
  reveal(line, column) {
    const lh = this.#lineHeight();
    const ta = this.textarea;
    ta.scrollTop = Math.max(0, (line - 1) * lh - ta.clientHeight / 2 + lh);
    if (column) {
      const lines = ta.value.split("\n");
      let off = 0;
      for (let i = 0; i < line - 1 && i < lines.length; i++) off += lines[i].length + 1;
      off += Math.max(0, column - 1);
      ta.setSelectionRange(off, off);
    }
    this.#sync(true);
  }

  focus() { this.textarea.focus({ preventScroll: true }); }

  #lineHeight() {
    return parseFloat(getComputedStyle(this.textarea).lineHeight) || 18;
  }

  // Tab is left to the browser: it moves on to the next control, as in
  // any text field, so the keyboard is never caught here. Ctrl+] indents
  // the caret's line (or every line of the selection) by two spaces, as
  // YAML wants, and Ctrl+[ takes two away.
  #key(e) {
    if (!e.ctrlKey || e.altKey || e.metaKey || e.shiftKey) return;
    const dir = e.key === "]" || e.code === "BracketRight" ? 1 : e.key === "[" || e.code === "BracketLeft" ? -1 : 0;
    if (!dir) return;
    e.preventDefault();
    this.indent(dir);
  }

  // #newline answers the line break that Enter types (its beforeinput,
  // whichever way the key came) with one that keeps the indentation of
  // the caret's line: a row typed after a marker row lines up with it, as
  // YAML needs.
  #newline(e) {
    if (e.isComposing || e.inputType !== "insertLineBreak" && e.inputType !== "insertParagraph") return;
    const ta = this.textarea;
    const v = ta.value;
    const start = v.lastIndexOf("\n", ta.selectionStart - 1) + 1;
    const indent = /^[ \t]*/.exec(v.slice(start, ta.selectionStart))[0];
    if (!indent) return; // the browser's own newline
    e.preventDefault();
    const text = "\n" + indent;
    if (!document.execCommand("insertText", false, text)) {
      ta.setRangeText(text, ta.selectionStart, ta.selectionEnd, "end");
      ta.dispatchEvent(new Event("input"));
    }
  }

  // indent moves the lines of the selection right (dir 1) or left (-1)
  // by INDENT, as one undoable edit; the selection moves with its text.
  indent(dir) {
    const ta = this.textarea;
    const v = ta.value;
    const { selectionStart: from, selectionEnd: to } = ta;
    const start = v.lastIndexOf("\n", from - 1) + 1;
    // A selection that ends at a line's start leaves that line alone.
    const last = to > from && v[to - 1] === "\n" ? to - 1 : to;
    const stop = v.indexOf("\n", last) < 0 ? v.length : v.indexOf("\n", last);
    const lines = v.slice(start, stop).split("\n");
    const moved = lines.map((l) => (dir > 0 ? (l === "" ? l : INDENT + l) : l.replace(/^ {1,2}/, "")));
    const text = moved.join("\n");
    if (text === v.slice(start, stop)) return;
    const first = moved[0].length - lines[0].length;
    ta.setSelectionRange(start, stop);
    // execCommand keeps the browser's undo history; setRangeText is the fallback.
    if (!document.execCommand("insertText", false, text)) {
      ta.setRangeText(text, start, stop, "end");
      ta.dispatchEvent(new Event("input"));
    }
    ta.setSelectionRange(Math.max(start, from + first), Math.max(start, to + text.length - (stop - start)));
  }

  // #keepInView runs when the textarea changes size. When it shrinks (the
  // problems strip opening under it), a line that was in view and matters
  // (the caret's, or an error's) is scrolled back into view: the lowest
  // such line, so that an error on one of the last lines stays visible.
  #keepInView(height) {
    const before = this.height;
    this.height = height;
    if (!before || height >= before || !this.visible) return;
    const ta = this.textarea;
    const lh = this.#lineHeight();
    const pad = parseFloat(getComputedStyle(ta).paddingTop) || 0;
    const bottom = (line) => pad + line * lh;
    const caret = ta.value.slice(0, ta.selectionEnd).split("\n").length;
    const lines = [caret, ...this.marks.errors.map((e) => e.line)]
      .filter((l) => bottom(l) - lh >= ta.scrollTop && bottom(l) <= ta.scrollTop + before);
    if (!lines.length) return;
    const want = bottom(Math.max(...lines)) - height;
    if (want > ta.scrollTop) {
      ta.scrollTop = want;
      this.#sync(true);
    }
  }

  // #sync moves the line numbers and marks with the text. Only a scroll,
  // or a line put in view, reads the textarea's scroll (which lays the page
  // out, there and then); a repaint of the marks takes the last one read,
  // and the browser lays the page out once, when it next draws it.
  #sync(scrolled = false) {
    if (scrolled) this.scroll = { top: this.textarea.scrollTop, left: this.textarea.scrollLeft };
    const { top: scrollTop, left: scrollLeft } = this.scroll ?? { top: 0, left: 0 };
    this.backdropInner.style.transform = `translate(${-scrollLeft}px, ${-scrollTop}px)`;
    this.gutterInner.style.transform = `translateY(${-scrollTop}px)`;
  }

  #render() {
    if (!this.visible) {
      this.stale = true;
      return;
    }
    this.stale = false;
    const large = this.textarea.value.length > PAINT_MAX;
    this.root.classList.toggle("large", large);
    if (large) {
      this.gutterInner.replaceChildren();
      this.backdropInner.replaceChildren();
      this.drawn = null;
      return;
    }
    const lines = this.textarea.value.split("\n");
    const errorsByLine = new Map();
    for (const e of this.marks.errors) {
      if (!errorsByLine.has(e.line)) errorsByLine.set(e.line, []);
      errorsByLine.get(e.line).push(e);
    }
    const spansByLine = new Map();
    for (const s of this.marks.spans) {
      if (!spansByLine.has(s.line)) spansByLine.set(s.line, []);
      spansByLine.get(s.line).push(s);
    }
    for (const e of this.marks.errors) {
      if (e.column > 0) {
        if (!spansByLine.has(e.line)) spansByLine.set(e.line, []);
        spansByLine.get(e.line).push({ line: e.line, column: e.column, length: 1, cls: "caret" });
      }
    }

    // Each line's row is drawn again only when what it shows changed: a
    // key changes one line, and the rows around it, their layout and
    // their paint, stay as they were.
    const rows = lines.map((text, i) => {
      const n = i + 1;
      const cls = this.marks.lines.get(n) ?? "";
      const errs = errorsByLine.get(n);
      const spans = spansByLine.get(n);
      const title = errs ? errs.map((e) => e.message).join("\n") : "";
      const at = spans?.map((x) => [x.column, x.length, x.cls]) ?? null; // without the line: a row that moves keeps its key
      return { text, cls, err: !!errs, title, spans, key: JSON.stringify([text, cls, title, at]) };
    });
    this.#drawGutter(rows);
    this.#drawBackdrop(rows);
    this.drawn = rows;
    this.#sync();
  }

  // #drawGutter updates the line numbers' rows in place: a number's row
  // changes only with its line's marks, and rows come and go at the end.
  #drawGutter(rows) {
    const box = this.gutterInner;
    const old = this.drawn ?? [];
    for (let i = 0; i < rows.length; i++) {
      const r = rows[i], o = old[i];
      if (o && o.cls === r.cls && o.err === r.err && o.title === r.title && box.children[i]) continue;
      const g = el("div", "gl");
      g.textContent = String(i + 1);
      if (r.cls) g.classList.add(`is-${r.cls}`);
      if (r.err) g.classList.add("is-err"), (g.title = r.title);
      if (box.children[i]) box.children[i].replaceWith(g);
      else box.append(g);
    }
    while (box.children.length > rows.length) box.lastChild.remove();
  }

  // #drawBackdrop keeps the rows before and after the lines that changed
  // (a line typed or deleted shifts the rows after it, which keep their
  // element and take their new number).
  #drawBackdrop(rows) {
    const box = this.backdropInner;
    let old = this.drawn ?? [];
    if (box.children.length !== old.length) {
      box.replaceChildren(); // rows not drawn here: draw them all
      old = [];
    }
    let head = 0;
    while (head < rows.length && head < old.length && rows[head].key === old[head].key) head++;
    let tail = 0;
    while (tail < rows.length - head && tail < old.length - head && rows[rows.length - 1 - tail].key === old[old.length - 1 - tail].key) tail++;
    const fresh = document.createDocumentFragment();
    for (let i = head; i < rows.length - tail; i++) fresh.append(backdropRow(rows[i]));
    for (let i = old.length - tail - 1; i >= head; i--) box.children[i].remove();
    box.insertBefore(fresh, box.children[head] ?? null);
    for (let i = head; i < rows.length; i++) {
      const b = box.children[i];
      if (b.dataset.line !== String(i + 1)) b.dataset.line = String(i + 1);
    }
    this.#sync();
  }
}

// backdropRow is the backdrop's row for a line: its text, transparent,
// with the line's marks behind it.
function backdropRow(r) {
  const b = el("div", "bl");
  if (r.cls) b.classList.add(`is-${r.cls}`);
  if (r.err) b.classList.add("is-err");
  paintLine(b, r.text, r.spans);
  return b;
}

// paintLine writes a line's text into b, with each span wrapped in a
// <mark>. Columns count bytes, as the engine's positions do; the text is
// UTF-16, so they are converted.
function paintLine(b, text, spans) {
  if (!spans || spans.length === 0) {
    b.textContent = text || " ";
    return;
  }
  const cuts = spans
    .map((s) => ({ start: utf16Index(text, s.column - 1), end: utf16Index(text, s.column - 1 + Math.max(1, s.length)), cls: s.cls }))
    .sort((a, b) => a.start - b.start);
  let at = 0;
  for (const c of cuts) {
    if (c.start < at) continue; // overlapping marks: the first wins
    if (c.start > at) b.append(text.slice(at, c.start));
    const m = document.createElement("mark");
    m.className = `is-${c.cls}`;
    m.textContent = c.start < text.length ? text.slice(c.start, c.end) : " ";
    b.append(m);
    at = Math.max(c.end, c.start + 1);
  }
  if (at < text.length) b.append(text.slice(at));
  if (text.length === 0 && cuts.length === 0) b.textContent = " ";
}

// utf16Index converts a byte offset in the UTF-8 form of s to an index
// into s.
export function utf16Index(s, byteOffset) {
  let bytes = 0;
  for (let i = 0; i < s.length; i++) {
    if (bytes >= byteOffset) return i;
    const c = s.codePointAt(i);
    bytes += c < 0x80 ? 1 : c < 0x800 ? 2 : c < 0x10000 ? 3 : 4;
    if (c >= 0x10000) i++;
  }
  return s.length;
}

function el(tag, cls) {
  const e = document.createElement(tag);
  e.className = cls;
  return e;
}
