// The input as a form, built from the rule set's declared inputs
// (dlroute_describe), kept in step with the input as JSON. The JSON text
// is what the engine gets: the form writes it, and reads it back when the
// person edits the JSON instead. The engine checks the values, so a field
// that does not parse is sent as text and the engine's wrong_type message
// says what is wrong, as `dlroute resolve --json` would.

// Suggestions for string inputs: what PJRT reports and JAX passes.
const suggestions = {
  platform: ["cpu", "gpu", "tpu", "METAL"],
  memory_kind: ["device", "pinned_host", "unpinned_host"],
};

export class InputForm {
  constructor(form, onChange) {
    this.form = form;
    this.onChange = onChange;
    this.fields = [];
    this.signature = "";
  }

  // setInputs builds the fields for a rule set's inputs; it does nothing
  // when they are the ones already shown.
  setInputs(inputs) {
    const signature = JSON.stringify(inputs.map((d) => [d.name, d.type, d.default]));
    if (signature === this.signature) return false;
    this.signature = signature;
    this.fields = inputs.map((d) => new Field(d, () => this.onChange()));
    this.form.replaceChildren(...this.fields.map((f) => f.row));
    return true;
  }

  // toJSON writes the fields as one JSON object. Ints are written as
  // typed, so a 64-bit id is never rounded by JavaScript's numbers.
  toJSON() {
    const parts = [];
    for (const f of this.fields) {
      const raw = f.raw();
      if (raw !== undefined) parts.push(`${JSON.stringify(f.decl.name)}:${raw}`);
    }
    return `{${parts.join(",")}}`;
  }

  // fromJSON shows an input object's values in the fields: a field the
  // object leaves out shows its default.
  fromJSON(obj) {
    for (const f of this.fields) f.show(Object.hasOwn(obj, f.decl.name) ? obj[f.decl.name] : f.decl.default);
  }

  // names of the declared inputs, to keep only those when the rule set
  // changes.
  get names() { return this.fields.map((f) => f.decl.name); }
}

class Field {
  constructor(decl, changed) {
    this.decl = decl;
    this.nullable = decl.type.endsWith("?");
    this.base = decl.type.replace(/\?$/, "");
    const id = `in-${decl.name}`;
    this.row = document.createElement("div");
    this.row.className = "field";
    const label = document.createElement("label");
    label.htmlFor = id;
    label.textContent = decl.name;
    const type = document.createElement("span");
    type.className = "type";
    type.textContent = decl.type + (decl.required ? "" : ` = ${JSON.stringify(decl.default ?? null)}`);
    label.append(" ", type);
    if (decl.doc) label.title = decl.doc;

    if (this.base === "bool") {
      this.control = document.createElement("select");
      for (const v of [...(this.nullable ? ["null"] : []), "true", "false"]) this.control.append(new Option(v, v));
    } else if (decl.name === "platform_version") {
      this.control = document.createElement("textarea");
      this.control.rows = 2;
      this.control.spellcheck = false;
      this.control.wrap = "off";
    } else {
      this.control = document.createElement("input");
      this.control.type = "text";
      this.control.spellcheck = false;
      this.control.autocomplete = "off";
      if (this.base === "int" || this.base === "uint") this.control.inputMode = "numeric";
      if (this.base.startsWith("list(")) this.control.placeholder = this.nullable ? "null, or values: 1, 0" : "values: 1, 0";
      if (suggestions[decl.name]) {
        const list = document.createElement("datalist");
        list.id = `${id}-options`;
        for (const s of suggestions[decl.name]) list.append(new Option(s));
        this.control.setAttribute("list", list.id);
        this.row.append(list);
      }
    }
    this.control.id = id;
    this.control.dataset.testid = `input-${decl.name}`;
    this.held = null; // the whole value, when it is too long to show
    this.control.addEventListener("input", () => {
      this.#hold(this.control.value);
      changed();
    });
    // A held value is read-only, but selected whole (Ctrl+A) it is
    // replaced as in any field: by what is typed, pasted or deleted.
    const replaceHeld = (e) => {
      if (this.held === null || e.ctrlKey && e.type === "keydown" || e.metaKey || e.altKey) return;
      if (e.type === "keydown" && e.key.length !== 1 && e.key !== "Backspace" && e.key !== "Delete") return;
      const c = this.control;
      if (c.selectionStart !== 0 || c.selectionEnd !== c.value.length) return;
      this.held = null;
      c.readOnly = false;
    };
    this.control.addEventListener("keydown", replaceHeld);
    this.control.addEventListener("paste", replaceHeld);
    this.row.append(label, this.control);
    this.size = document.createElement("div");
    this.size.className = "size";
    this.size.id = `${id}-size`;
    this.size.dataset.testid = `input-${decl.name}-size`;
    this.size.hidden = true;
    this.sizeText = document.createElement("span");
    this.clear = document.createElement("button");
    Object.assign(this.clear, { type: "button", className: "link", textContent: "Clear" });
    this.clear.dataset.testid = `input-${decl.name}-clear`;
    this.clear.addEventListener("click", () => {
      this.#hold("");
      changed();
      this.control.focus();
    });
    this.size.append(this.sizeText, " ", this.clear);

    // A nullable scalar gets a "null" box; a nullable list is null when empty.
    if (this.nullable && this.base !== "bool" && !this.base.startsWith("list(")) {
      const box = document.createElement("label");
      box.className = "null";
      this.isNull = document.createElement("input");
      this.isNull.type = "checkbox";
      this.isNull.dataset.testid = `input-${decl.name}-null`;
      this.isNull.addEventListener("input", () => {
        this.control.disabled = this.isNull.checked;
        changed();
      });
      box.append(this.isNull, " null");
      this.row.append(box);
    }
    this.row.append(this.size);
    this.show(decl.default);
  }

  // value is the field's text: all of it, also when only its start shows.
  value() {
    return this.held ?? this.control.value;
  }

  // #hold puts text in the field. Text longer than SHOW_MAX is kept here
  // whole, and the field shows its start, read-only, with its length and
  // a button that clears it: a browser lays out megabytes in a field
  // slowly, or draws them not at all, and the field would seem empty.
  #hold(text) {
    if (text.length > SHOW_MAX) {
      this.held = text;
      this.control.value = text.slice(0, PREVIEW) + "…";
      this.control.readOnly = true;
    } else {
      this.held = null;
      this.control.readOnly = false;
      if (this.control.value !== text) this.control.value = text;
    }
    // A value longer than the engine takes is said so, with its length.
    const bytes = text.length * 3 <= ENGINE_STRING_MAX ? 0 : new TextEncoder().encode(text).length;
    const long = bytes > ENGINE_STRING_MAX;
    this.size.hidden = !long;
    this.clear.hidden = this.held === null;
    if (long) {
      this.sizeText.textContent = longText(text.length, bytes) + (this.held === null ? "." : `; the field shows the first ${PREVIEW.toLocaleString("en-US")}.`);
      this.control.setAttribute("aria-describedby", this.size.id);
    } else {
      this.control.removeAttribute("aria-describedby");
    }
  }

  // raw is the field as JSON text, or undefined to leave it out.
  raw() {
    return fieldJSON(this.decl.type, this.value(), !!this.isNull?.checked);
  }

  show(value) {
    if (this.isNull) {
      this.isNull.checked = value === null || value === undefined;
      this.control.disabled = this.isNull.checked;
      if (this.isNull.checked) return;
    }
    const text = fieldText(this.decl.type, value);
    if (text !== this.value()) this.#hold(text);
  }
}

// A field shows at most SHOW_MAX characters; past that, its first PREVIEW.
const SHOW_MAX = 256 << 10;
const PREVIEW = 1000;

// ENGINE_STRING_MAX is the longest string value the engine takes, in
// bytes; a longer one is answered too_long.
const ENGINE_STRING_MAX = 4096;

// longText says how long a value over ENGINE_STRING_MAX is.
export function longText(chars, bytes) {
  const size = bytes >= 1 << 20 ? `${(bytes / 1048576).toFixed(1)} MiB` : `${(bytes / 1024).toFixed(1)} KiB`;
  return `${chars.toLocaleString("en-US")} characters (${size}), more than the ${ENGINE_STRING_MAX} bytes the engine takes`;
}

// fieldJSON is a field of a declared type ("int?", "list(int)", "string")
// holding text, as JSON text for the input line; undefined leaves the
// field out (its default applies, or the engine says it is missing). A
// value that does not parse as the type goes as a JSON string, so the
// engine's wrong_type says what is wrong with it.
export function fieldJSON(type, text, isNull) {
  const nullable = type.endsWith("?");
  const base = type.replace(/\?$/, "");
  if (isNull) return "null";
  if (base === "bool") return text;
  if (base === "int" || base === "uint") {
    const t = text.trim();
    if (t === "") return undefined;
    return /^-?\d+$/.test(t) ? t : JSON.stringify(text);
  }
  if (base.startsWith("list(")) {
    const t = text.trim().replace(/^\[|\]$/g, "");
    if (t === "") return nullable ? "null" : "[]";
    const items = t.split(",").map((s) => s.trim());
    return items.every((s) => /^-?\d+$/.test(s)) ? `[${items.join(",")}]` : JSON.stringify(text);
  }
  if (base === "string") return JSON.stringify(text);
  try {
    JSON.parse(text);
    return text;
  } catch {
    return JSON.stringify(text);
  }
}

// fieldText is how a field of a declared type shows value, one of the
// input object's: a list as "1, 0", null as "" (or "null" in a bool's menu).
export function fieldText(type, value) {
  if (value === null || value === undefined) return type.startsWith("bool") ? "null" : "";
  if (Array.isArray(value)) return value.join(", ");
  if (typeof value === "object") return JSON.stringify(value);
  return String(value);
}
