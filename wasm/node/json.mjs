// JSON as the Go side writes it. Decisions come out of the module as bytes
// and are passed on untouched; what this package writes itself (an input
// object sent to the module, the error lines of resolve.mjs) must be the
// bytes Go's encoding/json writes with SetEscapeHTML(false).

import { InputError } from "./errors.js";

/**
 * goString is JSON.stringify(s) as Go writes it: the same, except that
 * U+2028 and U+2029 are escaped (Go does, so the output is also valid
 * JavaScript source).
 */
export function goString(s) {
  const j = JSON.stringify(s);
  return LINE_SEPARATORS.test(j) ? j.replace(LINE_SEPARATORS_ALL, (c) => (c === "\u2028" ? "\\u2028" : "\\u2029")) : j;
}

const LINE_SEPARATORS = /[\u2028\u2029]/;
const LINE_SEPARATORS_ALL = /[\u2028\u2029]/g;

/**
 * encodeInput writes an input object as one JSON line for the module. It
 * refuses, with an InputError of code wrong_type, what JSON cannot carry
 * and JSON.stringify would silently change: NaN and Infinity (which it
 * writes as null) and functions and symbols (which it drops). A bigint is
 * written as its digits, so an id above 2^53 keeps every digit. A field
 * whose value is undefined is left out, as JSON.stringify leaves it out:
 * the input's default applies.
 */
export function encodeInput(input) {
  return encode(input, "input");
}

function encode(v, path) {
  switch (typeof v) {
    case "string":
      return goString(v);
    case "boolean":
      return v ? "true" : "false";
    case "bigint":
      return v.toString();
    case "number":
      if (!Number.isFinite(v)) throw new InputError(`${path} is ${v}, which JSON cannot carry`, { code: "wrong_type" });
      return JSON.stringify(v);
    case "object": {
      if (v === null) return "null";
      if (typeof v.toJSON === "function") return encode(v.toJSON(), path);
      if (Array.isArray(v)) {
        let out = "[";
        for (let i = 0; i < v.length; i++) out += (i ? "," : "") + encode(v[i] === undefined ? null : v[i], `${path}[${i}]`);
        return out + "]";
      }
      let out = "{";
      for (const k of Object.keys(v)) {
        const x = v[k];
        if (x === undefined) continue;
        out += (out.length > 1 ? "," : "") + goString(k) + ":" + encode(x, path === "input" ? `input ${k}` : `${path}.${k}`);
      }
      return out + "}";
    }
    default:
      throw new InputError(`${path} is a ${typeof v}, which JSON cannot carry`, { code: "wrong_type" });
  }
}

/**
 * errorLine is the line `dlroute resolve --json` writes for an input it
 * could not decide: {"input_error":{...}} or {"eval_error":{...}}, with the
 * line number and the fields in the order Go writes them (the rule file's
 * source line is left out, as the command leaves it out).
 */
export function errorLine(kind, line, err) {
  let s = `{"${kind}":{"line":${line},"code":${goString(err.code)},"message":${goString(err.message)}`;
  if (err.position) {
    const p = err.position;
    s += `,"position":{"file":${goString(p.file)},"line":${p.line},"column":${p.column}}`;
  }
  if (err.hint) s += `,"hint":${goString(err.hint)}`;
  return s + "}}";
}
