// The client of the decision module's ABI (wasm/decision/ABI.md, version
// 3): the module that decides with plans the Go engine compiled, with no
// CEL compiler inside. It is a plain ES module with no Node.js built-ins,
// as client.js is, so that a browser host can run it too; the host starts
// the module with noMachineImports (its two host functions, answering as
// a host that reads no machine and copies nothing) and runs _initialize,
// and a DecisionClient does the rest. Like client.js it believes nothing the module answers
// without checking it: a status ABI.md does not list, an output longer
// than its buffer or a too_small that asks for no more room make the
// instance dead, as a trap does, with a ModuleError.
//
// It also reads the two encodings a host needs before it asks the module
// anything: a set of plans (rules/plans.bin, Go's plan.EncodeSet), to
// find a version's plan by its ref, and a plan's declared inputs, to know
// whether a version reads platform_version.

import { ModuleError } from "./errors.js";

/** The ABI version of the decision module (wasm/decision/ABI.md). */
export const DECISION_ABI_VERSION = 3;

/** The decision module's statuses by number (ABI.md, Results); 6 and 8 are not. */
export const DECISION_STATUS = Object.freeze(["ok", "input_error", "eval_error", "load_error", "no_ruleset", "bad_handle", undefined, "too_small", undefined, "host_error"]);

/** The host module the decision module imports from: the compiler module's (ABI.md, Imports). */
export const DECISION_HOST_MODULE = "dlroute_host";

/** The functions the decision module imports from DECISION_HOST_MODULE, and nothing else. */
export const DECISION_IMPORTS = Object.freeze(["platform_version", "copy_to_host"]);

/** The host status "unavailable": this host has nothing to answer with. */
const HOST_UNAVAILABLE = 2;

/**
 * noMachineImports is the decision module's imports for a host that reads
 * no machine and has no copier, as every JavaScript host is:
 * platform_version answers status 2 ("reads no machine": a line that
 * leaves platform_version out is checked as it is, missing_field), and
 * copy_to_host status 2 ("no copier").
 */
export function noMachineImports() {
  return { [DECISION_HOST_MODULE]: { platform_version: () => HOST_UNAVAILABLE, copy_to_host: () => HOST_UNAVAILABLE } };
}

/**
 * Where the decision module is and how to rebuild it, for hints: it is
 * checked in, and rebuilt from its C sources by clang.
 */
export const DECISION_BUILD = "use the one checked in at wasm/decision/decision.wasm, or rebuild it from the repository root with go generate ./wasm/decision (clang, lld, wasi-libc and libclang-rt-14-dev-wasm32 from Debian)";

const OK = 0;
const BAD_HANDLE = 5;
const TOO_SMALL = 7;

/** The exports a host calls (ABI.md, Exports). */
const EXPORTS = ["memory", "_initialize", "dlroute_abi_version", "dlroute_alloc", "dlroute_free", "dlroute_load_plan", "dlroute_decide", "dlroute_explain", "dlroute_release"];

/** The buffers' first size: every shipped decision and input line fits. */
const FIRST_BUFFER = 4 << 10;

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/**
 * checkDecisionModule throws a ModuleError unless module, a compiled
 * WebAssembly.Module, exports what the decision module does.
 */
export function checkDecisionModule(module) {
  const names = new Set(WebAssembly.Module.exports(module).map((e) => e.name));
  const missing = EXPORTS.filter((n) => !names.has(n));
  if (missing.length) {
    throw new ModuleError(`the decision module does not export ${missing.join(", ")}: it is not dlroute's decision module`, { hint: DECISION_BUILD });
  }
}

/**
 * DecisionClient calls one started instance of the decision module. It is
 * not safe for concurrent use, as the instance is not.
 */
export class DecisionClient {
  #x;
  #memory;
  #failure = null;
  #in = 0;
  #inCap = 0;
  #out = 0;
  #outCap = 0;
  // A view of the module's memory, and one of the input buffer, made
  // again when the memory grows.
  #bytes = null;
  #inBytes = null;

  /** DecisionClient takes the exports of an instance whose _initialize has run, and checks its ABI version. */
  constructor(exports) {
    this.#x = exports;
    this.#memory = exports.memory;
    const version = this.#guard("dlroute_abi_version", () => exports.dlroute_abi_version());
    if (version !== DECISION_ABI_VERSION) {
      throw new ModuleError(`the decision module has ABI version ${version}; this host speaks version ${DECISION_ABI_VERSION}`, {
        hint: DECISION_BUILD,
      });
    }
    this.#growIn(FIRST_BUFFER);
    this.#growOut(FIRST_BUFFER);
  }

  /** dead is true once a call trapped or answered what the ABI does not allow: start another instance. */
  get dead() {
    return this.#failure !== null;
  }

  /**
   * loadPlan hands the module one plan's bytes: {status: "ok", handle},
   * or {status: "load_error", text} with the JSON array of its errors.
   */
  loadPlan(plan) {
    this.#put(plan);
    const r = this.#call("dlroute_load_plan", (out, cap) => this.#x.dlroute_load_plan(this.#in, plan.length, out, cap), true);
    return r.status === "ok" ? { status: "ok", handle: r.value } : r;
  }

  /**
   * decide decides one JSON line (a string or its UTF-8 bytes) with the
   * plan of handle: {status, text}, the decision's JSON when status is
   * "ok", else the error object's ("input_error", "eval_error") or
   * nothing ("bad_handle").
   */
  decide(handle, line) {
    return this.#answer("dlroute_decide", handle, line);
  }

  /** explain is decide, answering the explanation's JSON: {"decision":...,"trace":...}. */
  explain(handle, line) {
    return this.#answer("dlroute_explain", handle, line);
  }

  #answer(name, handle, line) {
    if (this.#failure) throw this.#failure;
    let n;
    // A string of n UTF-16 units is at most 3n bytes of UTF-8: encoded
    // straight into the module's memory when that fits.
    if (typeof line === "string" && line.length * 3 <= this.#inCap) {
      n = encoder.encodeInto(line, this.#inView()).written;
    } else {
      const bytes = typeof line === "string" ? encoder.encode(line) : line;
      this.#put(bytes);
      n = bytes.length;
    }
    const f = this.#x[name];
    return this.#call(name, (out, cap) => f(handle, this.#in, n, out, cap), false);
  }

  /** release lets go of a handle; on a dead instance it does nothing. */
  release(handle) {
    if (this.#failure) return;
    this.#guard("dlroute_release", () => this.#x.dlroute_release(handle));
  }

  // #call runs f(out, cap), growing the output on too_small, and returns
  // {status, value, text}: text is the output (empty for a handle, or for
  // bad_handle).
  #call(name, f, answersHandle) {
    for (let attempt = 0; attempt < 3; attempt++) {
      let r;
      try {
        r = f(this.#out, this.#outCap);
      } catch (err) {
        this.#failure = new ModuleError(`the decision module trapped in ${name}: ${err.message}`, { cause: err, hint: "the next call starts a fresh instance" });
        throw this.#failure;
      }
      // The status is the high half: an answer of ok, the most common,
      // is its length alone, read without a BigInt operation.
      const ok = r <= 0xffffffffn;
      const code = ok ? OK : Number(r >> 32n);
      const value = ok ? Number(r) : Number(r & 0xffffffffn);
      if (code === TOO_SMALL) {
        if (value <= this.#outCap) this.#fail(`${name} answered too_small for ${value} bytes, and its buffer has ${this.#outCap}`);
        this.#growOut(value);
        continue;
      }
      const status = DECISION_STATUS[code];
      if (status === undefined) this.#fail(`${name} answered status ${code}, which ABI version ${DECISION_ABI_VERSION} does not have`);
      if ((code === OK && answersHandle) || code === BAD_HANDLE) return { status, value, text: "" };
      if (value > this.#outCap) this.#fail(`${name} answered ${value} bytes of output, and its buffer has ${this.#outCap}`);
      return { status, value, text: decoder.decode(this.#view().subarray(this.#out, this.#out + value)) };
    }
    this.#fail(`${name} answered too_small 3 times`);
  }

  #view() {
    // A view of memory that grew is of a detached buffer: its length is 0.
    if (this.#bytes === null || this.#bytes.length === 0) {
      this.#bytes = new Uint8Array(this.#memory.buffer);
      this.#inBytes = null;
    }
    return this.#bytes;
  }

  // #inView is a view of the input buffer, kept while the memory does not grow.
  #inView() {
    if (this.#inBytes === null || this.#inBytes.length === 0) this.#inBytes = this.#view().subarray(this.#in, this.#in + this.#inCap);
    return this.#inBytes;
  }

  #put(bytes) {
    this.#growIn(bytes.length);
    this.#view().set(bytes, this.#in);
  }

  #guard(name, f) {
    try {
      return f();
    } catch (err) {
      this.#failure = new ModuleError(`the decision module trapped in ${name}: ${err.message}`, { cause: err, hint: "the next call starts a fresh instance" });
      throw this.#failure;
    }
  }

  #fail(message) {
    this.#failure = new ModuleError(message);
    throw this.#failure;
  }

  #growIn(size) {
    if (size <= this.#inCap) return;
    this.#inCap = Math.max(size, 2 * this.#inCap);
    this.#in = this.#alloc(this.#in, this.#inCap);
    this.#inBytes = null;
  }

  #growOut(size) {
    if (size <= this.#outCap) return;
    this.#outCap = Math.max(size, 2 * this.#outCap);
    this.#out = this.#alloc(this.#out, this.#outCap);
  }

  #alloc(old, size) {
    if (old) this.#guard("dlroute_free", () => this.#x.dlroute_free(old));
    const p = this.#guard("dlroute_alloc", () => this.#x.dlroute_alloc(size)) >>> 0;
    if (p === 0) this.#fail(`the decision module could not allocate ${size} bytes`);
    if (p + size > this.#memory.buffer.byteLength) this.#fail(`the decision module's buffer of ${size} bytes at ${p} is outside its memory`);
    return p;
  }
}

/** The first bytes of a set of plans and of a plan (Go's plan.SetMagic, plan.Magic). */
const SET_MAGIC = "DLPLANSET";
const PLAN_MAGIC = "DLPLAN";

/**
 * readPlanSet reads a set of plans (rules/plans.bin) into a Map from each
 * version's ref ("jax@v3") to its plan's bytes (views of set). Bytes that
 * are not a set throw a ModuleError: the set is the package's own file.
 */
export function readPlanSet(set) {
  const r = new Reader(set, SET_MAGIC, "a set of plans");
  r.uint(); // its format version: the module checks each plan's own
  const plans = new Map();
  for (let n = r.uint(); n > 0; n--) {
    const ref = decoder.decode(r.bytes(r.uint()));
    plans.set(ref, r.bytes(r.uint()));
  }
  if (r.at !== set.length) throw new ModuleError(`${set.length - r.at} bytes after the last plan of the set`);
  return plans;
}

/**
 * planInputs reads the declared inputs of a plan (imports' first, as Go's
 * plan.Plan.Inputs): [{name, required}]. It reads the plan's string
 * table and the fields before the inputs, which every format version of
 * the plan writes alike (plan/codec.go), and skips each default.
 */
export function planInputs(plan) {
  const r = new Reader(plan, PLAN_MAGIC, "a plan");
  r.uint(); // format version
  const table = [];
  for (let n = r.uint(); n > 0; n--) table.push(decoder.decode(r.bytes(r.uint())));
  const str = () => {
    const i = r.uint();
    if (i >= table.length) throw new ModuleError(`a plan's string ${i} is out of range`);
    return table[i];
  };
  str(); // ref
  r.uint(); // step limit
  r.uint(); // locals
  r.uint(); // values
  const inputs = [];
  for (let n = r.uint(); n > 0; n--) {
    const name = str();
    skipType(r, str);
    const required = r.byte() === 1;
    if (!required) skipValue(r, str);
    inputs.push({ name, required });
  }
  return inputs;
}

// The kinds of list and map types, which have an element type after them.
const KIND_LIST = 7;
const KIND_MAP = 8;

function skipType(r, str) {
  const kind = r.byte();
  r.byte(); // nullable
  str(); // as written
  if (kind === KIND_LIST || kind === KIND_MAP) skipType(r, str);
}

// skipValue skips a value: a tag byte (null, false, true, int, uint,
// double, string, list, map, object) and its contents.
function skipValue(r, str) {
  switch (r.byte()) {
    case 0:
    case 1:
    case 2:
      return;
    case 3:
    case 4:
      r.skipVarint();
      return;
    case 5:
      r.bytes(8);
      return;
    case 6:
      str();
      return;
    case 7:
      for (let n = r.uint(); n > 0; n--) skipValue(r, str);
      return;
    case 8:
      for (let n = r.uint(); n > 0; n--) skipValue(r, str), skipValue(r, str);
      return;
    case 9:
      for (let n = r.uint(); n > 0; n--) str(), skipValue(r, str);
      return;
    default:
      throw new ModuleError("a plan holds a value of a kind this package does not read");
  }
}

/** Reader reads the varints and byte runs of Go's plan encodings. */
class Reader {
  at = 0;

  constructor(b, magic, what) {
    this.b = b;
    this.what = what;
    const head = decoder.decode(b.subarray(0, magic.length));
    if (head !== magic) {
      throw new ModuleError(`${what} does not start with ${magic}`);
    }
    this.at = magic.length;
  }

  byte() {
    if (this.at >= this.b.length) this.#truncated();
    return this.b[this.at++];
  }

  /** uint reads a uvarint; one above 2^53 is more than any count here. */
  uint() {
    let v = 0;
    for (let shift = 0; shift < 53; shift += 7) {
      const c = this.byte();
      v += (c & 0x7f) * 2 ** shift;
      if (c < 0x80) return v;
    }
    throw new ModuleError(`${this.what} holds a number too large to be a count`);
  }

  /** skipVarint skips a varint of any size (an int64 default). */
  skipVarint() {
    for (let i = 0; i < 10; i++) if (this.byte() < 0x80) return;
    throw new ModuleError(`${this.what} holds a varint longer than 10 bytes`);
  }

  bytes(n) {
    if (this.at + n > this.b.length) this.#truncated();
    const out = this.b.subarray(this.at, this.at + n);
    this.at += n;
    return out;
  }

  #truncated() {
    throw new ModuleError(`${this.what} is truncated`);
  }
}
