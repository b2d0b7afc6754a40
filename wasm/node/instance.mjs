// One instance of the dlroute module: WASI, the host functions, the input
// and output buffers in guest memory, and calls that follow ABI.md's
// conventions (a status and a length packed in an i64; grow the output
// buffer and call again on too_small). An instance runs one call at a
// time, which is all a Node.js thread asks of it.

import { createRequire } from "node:module";

import { ModuleError } from "./errors.mjs";
import { HOST_MODULE, hostImports } from "./host.mjs";

// node:wasi is required, not imported, so that loading it is synchronous
// and its warning can be told apart (newWASI).
const require = createRequire(import.meta.url);

/** The ABI version this host speaks (wasm/ABI.md). */
export const ABI_VERSION = 1;

/** Statuses of the exports, by number (ABI.md, Results). */
export const STATUS = Object.freeze(["ok", "input_error", "eval_error", "load_error", "no_ruleset", "bad_handle", "bad_argument", "too_small", "not_loaded", "host_error"]);
const OK = 0;
const TOO_SMALL = 7;

/** What an instance needs to learn the module's ABI version. */
const BOOT_EXPORTS = ["memory", "_initialize", "dlroute_abi_version"];

/** The exports of ABI version 1 that this host calls. */
export const CALLED_EXPORTS = Object.freeze(["dlroute_alloc", "dlroute_free", "dlroute_load", "dlroute_ruleset", "dlroute_describe", "dlroute_resolve_json", "dlroute_explain_json", "dlroute_exchange"]);

/** The exports that take an input buffer before their output buffer. */
const TAKES_INPUT = new Set(["dlroute_load", "dlroute_ruleset", "dlroute_resolve_json", "dlroute_explain_json", "dlroute_exchange"]);

const BUILD = "GOOS=wasip1 GOARCH=wasm go build -trimpath -buildmode=c-shared -o dlroute.wasm ./wasm";

/**
 * newWASI makes the WASI preview1 implementation for one instance. The
 * guest's stdout goes to stderr: the Go runtime writes only a panic there,
 * and a script's stdout carries decisions.
 *
 * Node prints an ExperimentalWarning when node:wasi is first loaded (Node
 * 20; later versions may print it when a WASI is constructed). Unless
 * showWarning is set, that one warning, from this package's own loading and
 * constructing, is not printed: both happen here, synchronously, with
 * process.emitWarning wrapped to drop exactly that warning. Every other
 * warning is printed as always. README.md ("The WASI warning") says why.
 */
function newWASI(showWarning) {
  const options = { version: "preview1", args: ["dlroute"], env: {}, stdout: 2, returnOnExit: true };
  const make = () => new (require("node:wasi").WASI)(options);
  return showWarning ? make() : withoutWASIWarning(make);
}

function withoutWASIWarning(f) {
  const emitWarning = process.emitWarning;
  process.emitWarning = function (warning, ...rest) {
    const type = typeof rest[0] === "string" ? rest[0] : rest[0]?.type;
    const message = typeof warning === "string" ? warning : warning?.message;
    if (type === "ExperimentalWarning" && message?.startsWith("WASI is an experimental feature")) return;
    return emitWarning.call(process, warning, ...rest);
  };
  try {
    return f();
  } finally {
    process.emitWarning = emitWarning;
  }
}

export class Instance {
  /** dead is set once a call trapped: the instance must be replaced. */
  dead = false;
  /** The rules generation this instance has loaded, and its handles by ref. */
  gen = 0;
  handles = new Map();

  #exports;
  #in = 0;
  #inCap = 0;
  #out = 0;
  #outCap = 0;

  /**
   * Instance starts module (a WebAssembly.Module) with host (see
   * hostImports) and checks that it is a dlroute module of ABI_VERSION.
   */
  constructor(module, host) {
    const names = new Set(WebAssembly.Module.exports(module).map((e) => e.name));
    const missing = BOOT_EXPORTS.filter((n) => !names.has(n));
    if (missing.length) {
      throw new ModuleError(`the module does not export ${missing.join(", ")}: it is not a dlroute module`, { hint: `build it with ${BUILD}` });
    }
    const wasi = newWASI(host.wasiWarning);
    let memory;
    const imports = { wasi_snapshot_preview1: wasi.wasiImport, [HOST_MODULE]: hostImports(host, () => memory) };
    let instance;
    try {
      instance = new WebAssembly.Instance(module, imports);
      memory = instance.exports.memory;
      wasi.initialize(instance);
    } catch (err) {
      throw new ModuleError(`starting the module: ${err.message}`, { cause: err, hint: `build it with ${BUILD}` });
    }
    this.#exports = instance.exports;
    const version = this.#guard("dlroute_abi_version", () => this.#exports.dlroute_abi_version());
    if (version !== ABI_VERSION) {
      throw new ModuleError(`the module has ABI version ${version}; this host speaks version ${ABI_VERSION}`, {
        hint: "rebuild the module from this source, or use a host of its version",
      });
    }
    const absent = CALLED_EXPORTS.filter((n) => typeof this.#exports[n] !== "function");
    if (absent.length) {
      throw new ModuleError(`the module does not export ${absent.join(", ")}: it is not a dlroute module of ABI version ${ABI_VERSION}`);
    }
    this.#grow(4096, 4096);
  }

  /**
   * call runs an export that takes (args..., input, output buffer), or
   * (args..., output buffer) when it takes no input, and returns its
   * status name and output bytes (a copy). input is a Uint8Array.
   */
  call(name, input, ...args) {
    if (TAKES_INPUT.has(name)) {
      this.#grow(input.length, 0);
      this.#inMemory(this.#in, input.length, "input");
      this.#bytes().set(input, this.#in);
    }
    for (let attempt = 0; attempt < 3; attempt++) {
      const all = TAKES_INPUT.has(name) ? [...args, this.#in, input.length, this.#out, this.#outCap] : [...args, this.#out, this.#outCap];
      const [status, n] = this.#guard(name, () => unpack(this.#exports[name](...all)));
      if (status === TOO_SMALL) {
        if (n <= this.#outCap) break; // the module asked for what it has: it is confused
        this.#grow(0, n);
        continue;
      }
      if (status !== OK && STATUS[status] === undefined) break;
      if (status === OK && name === "dlroute_ruleset") return { status: STATUS[status], value: n, out: null }; // n is the handle
      this.#inMemory(this.#out, n, "output");
      return { status: STATUS[status], value: n, out: this.#bytes().slice(this.#out, this.#out + n) };
    }
    this.dead = true;
    throw new ModuleError(`${name} answered with a status this host does not know, or kept answering too_small`);
  }

  /** #guard runs f, a call into the module; an exception there is a trap, and the instance is dead. */
  #guard(name, f) {
    try {
      return f();
    } catch (err) {
      this.dead = true;
      throw new ModuleError(`the module trapped in ${name}: ${err.message}`, { cause: err, hint: "the next call starts a fresh instance" });
    }
  }

  /** #inMemory checks that the module's buffer [at, at+n) is inside its memory: a module that says otherwise is broken. */
  #inMemory(at, n, what) {
    if (at + n > this.#exports.memory.buffer.byteLength) {
      this.dead = true;
      throw new ModuleError(`the module's ${what} buffer of ${n} bytes at ${at} is outside its memory`);
    }
  }

  #bytes() {
    return new Uint8Array(this.#exports.memory.buffer);
  }

  /** #grow makes the guest buffers at least this large. */
  #grow(inSize, outSize) {
    const alloc = (old, size) => {
      if (old) this.#guard("dlroute_free", () => this.#exports.dlroute_free(old));
      const p = this.#guard("dlroute_alloc", () => this.#exports.dlroute_alloc(size)) >>> 0;
      if (p === 0) {
        this.dead = true;
        throw new ModuleError(`the module could not allocate ${size} bytes`);
      }
      return p;
    };
    if (inSize > this.#inCap) {
      this.#in = alloc(this.#in, inSize);
      this.#inCap = inSize;
    }
    if (outSize > this.#outCap) {
      this.#out = alloc(this.#out, outSize);
      this.#outCap = outSize;
    }
  }
}

/** unpack splits an export's i64 result into its status and 32-bit value. */
function unpack(r) {
  return [Number(BigInt.asUintN(64, r) >> 32n), Number(BigInt.asUintN(32, r))];
}
