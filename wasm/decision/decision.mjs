// The decision module (ABI version 3, ABI.md beside this file; the
// checked-in decision.wasm) in Node.js: the few calls that load a plan and
// decide JSON lines. The module imports only its two host functions,
// which this client answers as a host that reads no machine and copies
// nothing (status 2), so it has no dependency and no WASI.

/** The ABI version this client speaks. */
export const ABI_VERSION = 3;

/** The statuses of ABI.md, by name. */
export const STATUS = Object.freeze({ ok: 0, input_error: 1, eval_error: 2, load_error: 3, no_ruleset: 4, bad_handle: 5, too_small: 7, host_error: 9 });

/**
 * IMPORTS are the module's imports (ABI.md, Imports) for a host that reads
 * no machine and has no copier: platform_version answers status 2, so a
 * line that leaves platform_version out is checked as it is
 * (missing_field), and copy_to_host answers status 2, no copier.
 */
const IMPORTS = { dlroute_host: { platform_version: () => 2, copy_to_host: () => 2 } };

const NAMES = Object.fromEntries(Object.entries(STATUS).map(([k, v]) => [v, k]));

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/**
 * A Decider is one instance of the decision module with one plan loaded.
 * `module` is a WebAssembly.Module (or the module's bytes); `plan` is one
 * plan's bytes, or with `ref` a set of plans (rules/plans.bin) and the
 * version to take from it. It throws an Error whose `code` is the
 * module's (bad_plan, no_ruleset) or "module_error".
 */
export class Decider {
  constructor(module, plan, ref = "") {
    if (!(module instanceof WebAssembly.Module)) module = new WebAssembly.Module(module);
    this.instance = new WebAssembly.Instance(module, IMPORTS);
    this.x = this.instance.exports;
    this.x._initialize();
    const version = this.x.dlroute_abi_version?.();
    if (version !== ABI_VERSION) throw moduleError(`the decision module speaks ABI version ${version}; this client speaks ${ABI_VERSION}`);
    this.out = this.#alloc(512);
    this.in = this.#alloc(512);
    const planBuf = this.#put({ ptr: 0, cap: 0 }, plan);
    let r;
    if (ref) {
      const refBuf = this.#put({ ptr: 0, cap: 0 }, encoder.encode(ref));
      r = this.#call((out, cap) => this.x.dlroute_load_set(planBuf.ptr, plan.length, refBuf.ptr, refBuf.len, out, cap), true);
      this.x.dlroute_free(refBuf.ptr);
    } else {
      r = this.#call((out, cap) => this.x.dlroute_load_plan(planBuf.ptr, plan.length, out, cap), true);
    }
    this.x.dlroute_free(planBuf.ptr);
    if (r.status !== STATUS.ok) {
      const body = JSON.parse(r.text);
      throw Object.assign(new Error((Array.isArray(body) ? body[0] : body).message), { code: (Array.isArray(body) ? body[0] : body).code });
    }
    this.handle = r.value;
  }

  /**
   * decide decides one JSON line (a string or UTF-8 bytes) and returns
   * {status, text}: the decision's JSON with status "ok", or an error
   * object's JSON with "input_error" or "eval_error", the bytes every
   * dlroute host answers.
   */
  decide(line) {
    return this.#answer(this.x.dlroute_decide, line);
  }

  /**
   * explain explains one JSON line as decide decides it and returns
   * {status, text}: the explanation's JSON with status "ok" (the
   * decision, the rules tried and every value, byte for byte what the
   * native engine's ExplainJSON answers), or decide's error object and
   * status.
   */
  explain(line) {
    if (!this.x.dlroute_explain) throw moduleError("the decision module has no dlroute_explain");
    return this.#answer(this.x.dlroute_explain, line);
  }

  #answer(fn, line) {
    let n;
    // A string of n UTF-16 units is at most 3n bytes of UTF-8: encoded
    // straight into the input buffer when that fits.
    if (typeof line === "string" && line.length * 3 <= this.in.cap) {
      n = encoder.encodeInto(line, this.#inView()).written;
    } else {
      const bytes = typeof line === "string" ? encoder.encode(line) : line;
      this.#put(this.in, bytes);
      n = bytes.length;
    }
    const r = this.#call((out, cap) => fn(this.handle, this.in.ptr, n, out, cap), false);
    return { status: NAMES[r.status], text: r.text };
  }

  // #inView is a view of the input buffer, made again when the buffer
  // moved or the memory grew (a grown memory's old views have length 0).
  #inView() {
    const v = this.inBytes;
    if (v === undefined || v.length === 0 || v.byteOffset !== this.in.ptr || v.length !== this.in.cap) {
      this.inBytes = new Uint8Array(this.x.memory.buffer, this.in.ptr, this.in.cap);
    }
    return this.inBytes;
  }

  #alloc(cap) {
    const ptr = this.x.dlroute_alloc(cap);
    if (ptr === 0) throw moduleError(`dlroute_alloc(${cap}) failed`);
    return { ptr, cap, len: 0 };
  }

  #put(buf, bytes) {
    if (buf.cap < bytes.length || buf.ptr === 0) {
      if (buf.ptr !== 0) this.x.dlroute_free(buf.ptr);
      Object.assign(buf, this.#alloc(Math.max(bytes.length, 512)));
    }
    new Uint8Array(this.x.memory.buffer, buf.ptr, bytes.length).set(bytes);
    buf.len = bytes.length;
    return buf;
  }

  // call runs f(out, cap), growing the output on too_small, and returns
  // the status, the low 32 bits (a handle when handle is set) and the
  // output's text.
  #call(f, handle) {
    for (let i = 0; i < 3; i++) {
      const r = f(this.out.ptr, this.out.cap);
      // ok, the usual answer, is its length alone: no BigInt operation.
      const ok = r <= 0xffffffffn;
      const status = ok ? STATUS.ok : Number(r >> 32n);
      const value = ok ? Number(r) : Number(r & 0xffffffffn);
      if (status === STATUS.too_small) {
        if (value <= this.out.cap) throw moduleError(`too_small asking for ${value} bytes of ${this.out.cap}`);
        this.x.dlroute_free(this.out.ptr);
        this.out = this.#alloc(value);
        continue;
      }
      if (!(status in NAMES)) throw moduleError(`status ${status} is not in ABI.md`);
      if ((status === STATUS.ok && handle) || status === STATUS.bad_handle) return { status, value, text: "" };
      if (value > this.out.cap) throw moduleError(`an output of ${value} bytes in a buffer of ${this.out.cap}`);
      return { status, value, text: decoder.decode(new Uint8Array(this.x.memory.buffer, this.out.ptr, value)) };
    }
    throw moduleError("too_small three times in one call");
  }
}

function moduleError(message) {
  return Object.assign(new Error(message), { code: "module_error" });
}
