// The client of the dlroute module's ABI (wasm/ABI.md), the one every
// JavaScript host speaks it through: the Node.js package (instance.mjs)
// and the browser playground (playground/engine.js, which is sent this
// file by package playground). It is a plain ES module with no Node.js
// built-ins and nothing of the page's, so it runs in both; the files this
// directory shares with the page end in .js, which every static server
// sends as JavaScript.
//
// A host starts the module with its own WASI and host functions and runs
// _initialize (ABI.md, Start-up, 1 and 2); a Client does the rest. It
// believes nothing the module answers without checking it: a status ABI
// version 1 does not have, a buffer outside the module's memory, an output
// longer than its buffer, or too_small that asks for no more room or
// comes CALL_ATTEMPTS times make the instance dead, as a trap does, with a
// ModuleError.

import { ModuleError } from "./errors.js";

/** The ABI version this client speaks (wasm/ABI.md). */
export const ABI_VERSION = 1;

/** The exports' statuses, by number (ABI.md, Results). */
export const STATUS = Object.freeze(["ok", "input_error", "eval_error", "load_error", "no_ruleset", "bad_handle", "bad_argument", "too_small", "not_loaded", "host_error"]);
const OK = 0;
const TOO_SMALL = 7;

/** The module the host functions are imported from (ABI.md, Imports). */
export const HOST_MODULE = "dlroute_host";

// The host functions' statuses (ABI.md, Imports).
export const HOST_OK = 0;
export const HOST_TOO_SMALL = 1;
export const HOST_UNAVAILABLE = 2;
export const HOST_FAULT = 3;
export const HOST_FAILED = 4;

/**
 * How many times one call is made at most: the first, one more after
 * too_small with a buffer of the size asked for, and one to spare. The
 * ABI says a too_small call has no other effect, so the second fits.
 */
export const CALL_ATTEMPTS = 3;

/** The input and output buffers' first size: most decisions and explanations fit. */
export const FIRST_BUFFER = 64 << 10;

/** The command that builds the module, for hints. */
export const BUILD = "GOOS=wasip1 GOARCH=wasm go build -trimpath -buildmode=c-shared -o dlroute.wasm ./wasm";

/** What a module must export before a host can learn its ABI version. */
const BOOT_EXPORTS = ["memory", "_initialize", "dlroute_abi_version"];

/** The exports that take an input buffer before their output buffer. */
const TAKES_INPUT = new Set(["dlroute_load", "dlroute_load_lazy", "dlroute_ruleset", "dlroute_resolve", "dlroute_resolve_json", "dlroute_explain_json", "dlroute_exchange"]);

/** The exports whose ok answer is a handle in the low bits, with no output. */
const ANSWERS_HANDLE = new Set(["dlroute_ruleset"]);

/**
 * checkModule throws a ModuleError unless module, a compiled
 * WebAssembly.Module, exports what every dlroute module does. A host runs
 * it before starting the module, so that another module is called that
 * rather than a failed start.
 */
export function checkModule(module) {
  const names = new Set(WebAssembly.Module.exports(module).map((e) => e.name));
  const missing = BOOT_EXPORTS.filter((n) => !names.has(n));
  if (missing.length) {
    throw new ModuleError(`the module does not export ${missing.join(", ")}: it is not a dlroute module`, { hint: `build it with ${BUILD}` });
  }
}

/**
 * Client calls one started instance of the module. It is not safe for
 * concurrent use, as the instance is not: one call at a time.
 */
export class Client {
  #x;
  #failure = null;
  #in = 0;
  #inCap = 0;
  #out = 0;
  #outCap = 0;

  /**
   * Client takes the exports of an instance whose _initialize has run,
   * checks that it speaks ABI_VERSION and has every export in calls (the
   * ones the host will call, besides dlroute_alloc and dlroute_free), and
   * allocates the buffers. It throws a ModuleError otherwise.
   */
  constructor(exports, calls = []) {
    this.#x = exports;
    const version = this.#guard("dlroute_abi_version", () => exports.dlroute_abi_version());
    if (version !== ABI_VERSION) {
      throw new ModuleError(`the module has ABI version ${version}; this host speaks version ${ABI_VERSION}`, {
        hint: "rebuild the module from this source, or use a host of its version",
      });
    }
    const absent = [...new Set(["dlroute_alloc", "dlroute_free", ...calls])].filter((n) => !this.has(n));
    if (absent.length) {
      throw new ModuleError(`the module does not export ${absent.join(", ")}: it is not a dlroute module of ABI version ${ABI_VERSION}`);
    }
    this.#growIn(FIRST_BUFFER);
    this.#growOut(FIRST_BUFFER);
  }

  /** dead is true once a call trapped or answered what the ABI does not allow: the host must start another instance. */
  get dead() {
    return this.#failure !== null;
  }

  /** memoryBytes is the size of the module's memory. */
  get memoryBytes() {
    return this.#x.memory.buffer.byteLength;
  }

  /** has reports whether the module exports the function name. */
  has(name) {
    return typeof this.#x[name] === "function";
  }

  /**
   * call runs the export name with its arguments args, then the input
   * buffer holding input (a Uint8Array) when the export takes one (pass
   * null when it does not), then the output buffer, growing the output
   * buffer and calling again on too_small. It returns the status's name,
   * the 32-bit value (the output's length, or the handle of an ok
   * dlroute_ruleset) and a copy of the output (null for a handle). A
   * status other than ok is an answer, not an exception; a trap, or an
   * answer the ABI does not allow, throws a ModuleError, and so does every
   * later call.
   */
  call(name, input, ...args) {
    if (this.#failure) throw this.#failure;
    if (!this.has(name)) throw new ModuleError(`the module does not export ${name}`);
    const takesInput = TAKES_INPUT.has(name);
    if (takesInput) {
      this.#growIn(input.length);
      this.#bytes().set(input, this.#in);
    }
    for (let attempt = 0; attempt < CALL_ATTEMPTS; attempt++) {
      const all = takesInput ? [...args, this.#in, input.length, this.#out, this.#outCap] : [...args, this.#out, this.#outCap];
      const [status, n] = this.#guard(name, () => unpack(this.#x[name](...all)));
      if (status === TOO_SMALL) {
        if (n <= this.#outCap) this.#fail(`${name} answered too_small for ${n} bytes, and its buffer has ${this.#outCap}`);
        this.#growOut(n);
        continue;
      }
      if (STATUS[status] === undefined) this.#fail(`${name} answered status ${status}, which ABI version ${ABI_VERSION} does not have`);
      if (status === OK && ANSWERS_HANDLE.has(name)) return { status: STATUS[status], value: n, out: null };
      if (n > this.#outCap) this.#fail(`${name} answered ${n} bytes of output, and its buffer has ${this.#outCap}`);
      return { status: STATUS[status], value: n, out: this.#bytes().slice(this.#out, this.#out + n) };
    }
    this.#fail(`${name} answered too_small ${CALL_ATTEMPTS} times`);
  }

  /** release lets go of a rule set's handle (dlroute_release); on a dead instance it does nothing. */
  release(handle) {
    if (this.#failure) return;
    this.#guard("dlroute_release", () => this.#x.dlroute_release(handle));
  }

  /** #guard runs f, a call into the module; an exception there is a trap, and the instance is dead. */
  #guard(name, f) {
    try {
      return f();
    } catch (err) {
      this.#failure = new ModuleError(`the module trapped in ${name}: ${err.message}`, { cause: err, hint: "the next call starts a fresh instance" });
      throw this.#failure;
    }
  }

  /** #fail makes the instance dead with a ModuleError of message, and throws it. */
  #fail(message) {
    this.#failure = new ModuleError(message);
    throw this.#failure;
  }

  #bytes() {
    return new Uint8Array(this.#x.memory.buffer);
  }

  #growIn(size) {
    if (size <= this.#inCap) return;
    this.#inCap = Math.max(size, 2 * this.#inCap);
    this.#in = this.#alloc(this.#in, this.#inCap);
  }

  #growOut(size) {
    if (size <= this.#outCap) return;
    this.#outCap = Math.max(size, 2 * this.#outCap);
    this.#out = this.#alloc(this.#out, this.#outCap);
  }

  /** #alloc frees old (unless 0) and returns a new buffer of size bytes, checked to lie inside the module's memory. */
  #alloc(old, size) {
    if (old) this.#guard("dlroute_free", () => this.#x.dlroute_free(old));
    const p = this.#guard("dlroute_alloc", () => this.#x.dlroute_alloc(size)) >>> 0;
    if (p === 0) this.#fail(`the module could not allocate ${size} bytes`);
    if (p + size > this.#x.memory.buffer.byteLength) this.#fail(`the module's buffer of ${size} bytes at ${p} is outside its memory`);
    return p;
  }
}

/** unpack splits an export's i64 result into its status and 32-bit value. */
export function unpack(r) {
  return [Number(BigInt.asUintN(64, r) >> 32n), Number(BigInt.asUintN(32, r))];
}
