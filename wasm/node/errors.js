// Errors: every error the package throws is a DlrouteError with a stable
// `code`, the same codes the Go engine and the module use (engine/errors.go),
// so a caller matches on err.code and never on the message.

/** The codes of an input that is not valid; every other code is not the input's fault. */
export const INPUT_CODES = Object.freeze(["json_syntax", "unknown_field", "missing_field", "wrong_type", "too_long", "invalid_utf8"]);

/** The code of an error about the module itself, as Go's wasmhost.CodeModule. */
export const CODE_MODULE = "module_error";

/**
 * DlrouteError is the base of every error: `code` is stable, `hint` says
 * what usually fixes it, `position` ({file, line, column}) and `source`
 * (that line of the rule file) point into the rules where they apply.
 */
export class DlrouteError extends Error {
  constructor(message, { code, hint, position, source, cause } = {}) {
    super(message, cause === undefined ? undefined : { cause });
    this.code = code;
    if (hint) this.hint = hint;
    if (position) this.position = position;
    if (source) this.source = source;
  }

  get name() {
    return this.constructor.name;
  }

  /** The error object as the module and `dlroute resolve --json` write it. */
  toJSON() {
    const o = { code: this.code, message: this.message };
    if (this.position) o.position = this.position;
    if (this.source) o.source = this.source;
    if (this.hint) o.hint = this.hint;
    return o;
  }
}

/** The input is not valid for the rule set (a code of INPUT_CODES). */
export class InputError extends DlrouteError {}

/** The input is valid, and the rules could not decide it (a rule failed, a cost limit). */
export class EvaluationError extends DlrouteError {}

/**
 * The rules did not load; the rules loaded before stay in service. `errors`
 * holds every error found, each a DlrouteError with its own code and
 * position. The code of a LoadError itself is always "load_error".
 */
export class LoadError extends DlrouteError {
  constructor(errors) {
    const first = errors[0];
    const more = errors.length > 1 ? ` (and ${errors.length - 1} more)` : "";
    super(`the rules do not load: ${where(first)}${first.message}${more}`, { code: "load_error" });
    this.errors = errors;
  }
}

/** The module is missing, is not a dlroute module, is of another ABI version, or trapped. */
export class ModuleError extends DlrouteError {
  constructor(message, { hint, cause } = {}) {
    super(message, { code: CODE_MODULE, hint, cause });
  }
}

/** A host function failed: the platform version could not be read, or a copy failed or has no copier. */
export class HostError extends DlrouteError {}

/**
 * formatError is an error as the Go command prints it (engine.Error's
 * Error method): "file:line:col: message", then the rule file's line and a
 * caret under the column.
 */
export function formatError(e) {
  let s = where(e) + e.message;
  if (e.position && e.source) {
    s += `\n | ${e.source}`;
    if (e.position.column > 0) s += `\n | ${caretPad(e.source, e.position.column)}^`;
  }
  return s;
}

// caretPad is the run of dots that puts a caret under byte column col,
// keeping tabs, as Go's caretPad does.
function caretPad(line, col) {
  const bytes = new TextEncoder().encode(line);
  let pad = "";
  for (let i = 0; i < col - 1 && i < bytes.length; i++) pad += bytes[i] === 0x09 ? "\t" : ".";
  return pad;
}

function where(e) {
  const p = e.position;
  if (!p) return "";
  return p.line ? `${p.file}:${p.line}${p.column ? ":" + p.column : ""}: ` : `${p.file}: `;
}

/**
 * fromErrorObject makes the module's error object (engine.Error's JSON) an
 * error of the class its status and code call for.
 */
export function fromErrorObject(obj, status) {
  const init = { code: obj.code, hint: obj.hint, position: obj.position, source: obj.source };
  if (status === "host_error") return new HostError(obj.message, init);
  if (INPUT_CODES.includes(obj.code)) return new InputError(obj.message, init);
  if (status === "eval_error" || status === "input_error") return new EvaluationError(obj.message, init);
  return new DlrouteError(obj.message, init);
}
