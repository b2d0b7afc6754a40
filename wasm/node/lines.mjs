// JSON Lines as `dlroute resolve --json` reads and answers them
// (cmd/dlroute/resolve.go): lines split on "\n" with one "\r" before it
// dropped, kept as bytes (an invalid UTF-8 line must reach the module as it
// is, to get the module's invalid_utf8 error), a line over MAX_LINE bytes
// read to its end and answered with too_long, and an empty last line
// after the final newline not a line at all.

import { DlrouteError } from "./errors.js";
import { errorEntry } from "./engine.mjs";
import { errorLine } from "./json.mjs";

/** The longest line read, as Go's maxLineLen: 4 MiB. */
export const MAX_LINE = 4 << 20;

const CR = 0x0d;
const LF = 0x0a;

/**
 * LineSplitter cuts chunks of bytes into lines. push returns the lines a
 * chunk completes; end returns the last line, if any. A line is
 * {bytes} or {tooLong: true}.
 */
export class LineSplitter {
  #parts = [];
  #size = 0;
  #tooLong = false;

  constructor(max = MAX_LINE) {
    this.max = max;
  }

  push(chunk) {
    const lines = [];
    let from = 0;
    for (let at = chunk.indexOf(LF); at >= 0; at = chunk.indexOf(LF, from)) {
      this.#add(chunk.subarray(from, at));
      lines.push(this.#take());
      from = at + 1;
    }
    this.#add(chunk.subarray(from));
    return lines;
  }

  end() {
    const last = this.#take();
    return last.tooLong || last.bytes.length > 0 ? last : null;
  }

  #add(part) {
    if (this.#tooLong || part.length === 0) return;
    // One more byte than max may be a "\r" that is dropped; more is too long.
    if (this.#size + part.length > this.max + 1) {
      this.#tooLong = true;
      this.#parts = [];
      return;
    }
    this.#parts.push(part);
    this.#size += part.length;
  }

  #take() {
    const tooLong = this.#tooLong;
    let bytes = Buffer.concat(this.#parts, this.#size);
    this.#parts = [];
    this.#size = 0;
    this.#tooLong = false;
    if (bytes.length > 0 && bytes[bytes.length - 1] === CR) bytes = bytes.subarray(0, bytes.length - 1);
    if (tooLong || bytes.length > this.max) return { tooLong: true };
    return { bytes };
  }
}

/**
 * answerLine decides one line with ruleset and returns the output line
 * (without its newline) and whether the line was answered with a decision.
 */
export function answerLine(ruleset, n, line) {
  if (line.tooLong) {
    return { text: errorLine("input_error", n, { code: "too_long", message: `line is longer than ${MAX_LINE} bytes` }), ok: false };
  }
  try {
    return { text: ruleset.resolveJSON(line.bytes), ok: true };
  } catch (err) {
    if (!(err instanceof DlrouteError)) throw err;
    const [kind, obj] = Object.entries(errorEntry(n, err))[0];
    return { text: errorLine(kind, n, obj), ok: false };
  }
}
