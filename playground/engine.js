// The dlroute module in the page: wasm/ABI.md, version 1, spoken from
// JavaScript. An Engine owns one instance; a call that traps leaves it
// unusable, and restart() makes a fresh one from the same compiled module.

import { createWASI } from "./wasi.js";

export const ABI_VERSION = 1;

// Statuses, in the high 32 bits of an export's result (ABI.md "Results").
export const Status = Object.freeze({
  ok: 0, input_error: 1, eval_error: 2, load_error: 3, no_ruleset: 4, bad_handle: 5,
  bad_argument: 6, too_small: 7, not_loaded: 8, host_error: 9,
});
const statusNames = Object.fromEntries(Object.entries(Status).map(([k, v]) => [v, k]));

// The host functions a page offers: it reads no machine (status 2,
// unavailable: an input without platform_version then gets the native
// engine's missing_field) and holds no buffers to copy.
const HOST_UNAVAILABLE = 2;
const hostImports = {
  platform_version: () => HOST_UNAVAILABLE,
  copy_to_host: () => HOST_UNAVAILABLE,
};

const encoder = new TextEncoder();
const decoder = new TextDecoder();

// Result is what a call answers: the status's name and the output's text.
// json() parses it (every output but a handle is JSON).
export class Result {
  constructor(status, text) {
    this.status = statusNames[status] ?? `status_${status}`;
    this.text = text;
  }
  get ok() { return this.status === "ok"; }
  json() { return this.text === "" ? null : JSON.parse(this.text); }
}

export class Engine {
  // instantiate fetches, compiles and starts the module at url. It uses
  // WebAssembly.instantiateStreaming (compiling while the bytes arrive)
  // when the server says application/wasm, and compiles the whole file
  // otherwise, as some static servers send another type.
  static async instantiate(url, print) {
    const resp = await fetch(url);
    if (!resp.ok) throw new Error(`fetching ${url}: ${resp.status} ${resp.statusText}`);
    const wasi = createWASI(print);
    const imports = { wasi_snapshot_preview1: wasi.imports, dlroute_host: hostImports };
    let module, instance;
    if ((resp.headers.get("Content-Type") || "").startsWith("application/wasm") && WebAssembly.instantiateStreaming) {
      ({ module, instance } = await WebAssembly.instantiateStreaming(resp, imports));
    } else {
      ({ module, instance } = await WebAssembly.instantiate(await resp.arrayBuffer(), imports));
    }
    performance.mark("dlroute:compiled");
    return new Engine(module, instance, wasi, print);
  }

  constructor(module, instance, wasi, print) {
    this.module = module;
    this.print = print;
    this.#start(instance, wasi);
  }

  #start(instance, wasi) {
    this.x = instance.exports;
    wasi.setMemory(this.x.memory);
    this.x._initialize();
    performance.mark("dlroute:initialized");
    const v = this.x.dlroute_abi_version();
    if (v !== ABI_VERSION) {
      throw new Error(`the module speaks ABI version ${v}; this page speaks ${ABI_VERSION} (rebuild the module from the same checkout as the page)`);
    }
    this.inCap = 0;
    this.outCap = 0;
    this.#growIn(64 << 10);
    this.#growOut(64 << 10);
    this.broken = null;
  }

  // restart throws the instance away and starts another from the compiled
  // module: after a trap, or to free what the old one held.
  async restart() {
    const wasi = createWASI(this.print);
    const instance = await WebAssembly.instantiate(this.module, { wasi_snapshot_preview1: wasi.imports, dlroute_host: hostImports });
    this.#start(instance, wasi);
  }

  // memoryBytes is the instance's memory size, for the page's status line.
  get memoryBytes() { return this.x.memory.buffer.byteLength; }

  #growIn(n) {
    if (this.in) this.x.dlroute_free(this.in);
    this.inCap = Math.max(n, this.inCap * 2);
    this.in = this.x.dlroute_alloc(this.inCap);
    if (this.in === 0) throw new Error(`the module could not allocate ${this.inCap} bytes`);
  }

  #growOut(n) {
    if (this.out) this.x.dlroute_free(this.out);
    this.outCap = Math.max(n, this.outCap * 2);
    this.out = this.x.dlroute_alloc(this.outCap);
    if (this.out === 0) throw new Error(`the module could not allocate ${this.outCap} bytes`);
  }

  // #put copies bytes into the input buffer, growing it first if needed.
  #put(bytes) {
    if (bytes.length > this.inCap) this.#growIn(bytes.length);
    new Uint8Array(this.x.memory.buffer, this.in, bytes.length).set(bytes);
    return bytes.length;
  }

  // #call runs fn(out, outCap) until the output fits, and returns the
  // status and the 32-bit value (a length or a handle). A trap marks the
  // instance broken and is thrown again.
  #call(fn) {
    if (this.broken) throw this.broken;
    for (;;) {
      let r;
      try {
        r = fn(this.out, this.outCap);
      } catch (e) {
        this.broken = e;
        throw e;
      }
      const status = Number(r >> 32n);
      const low = Number(r & 0xffffffffn);
      if (status !== Status.too_small) return [status, low];
      this.#growOut(low);
    }
  }

  #text(n) {
    return decoder.decode(new Uint8Array(this.x.memory.buffer, this.out, n));
  }

  // load hands a rules directory to the module: files maps
  // "jax/v3/rules.yaml" to its text. ok, or load_error with the errors.
  load(files) {
    const parts = [];
    let size = 0;
    for (const [path, text] of files) {
      const p = encoder.encode(path), d = encoder.encode(text);
      parts.push(p, d);
      size += 8 + p.length + d.length;
    }
    const archive = new Uint8Array(size);
    const dv = new DataView(archive.buffer);
    let off = 0;
    for (const part of parts) {
      dv.setUint32(off, part.length, true);
      archive.set(part, off + 4);
      off += 4 + part.length;
    }
    const n = this.#put(archive);
    const [status, len] = this.#call((out, cap) => this.x.dlroute_load(this.in, n, out, cap));
    return new Result(status, this.#text(len));
  }

  // ruleset returns {handle} for "jax" or "jax@v2", or {error}.
  ruleset(ref) {
    const n = this.#put(encoder.encode(ref));
    const [status, low] = this.#call((out, cap) => this.x.dlroute_ruleset(this.in, n, out, cap));
    if (status === Status.ok) return { handle: low };
    return { error: new Result(status, this.#text(low)) };
  }

  describe(handle) { return this.#answer((out, cap) => this.x.dlroute_describe(handle, out, cap)); }
  test(handle) { return this.#answer((out, cap) => this.x.dlroute_test(handle, out, cap)); }
  release(handle) { if (!this.broken) this.x.dlroute_release(handle); }

  // resolveJSON and explainJSON take one JSON object, a line of
  // `dlroute resolve --json`, and answer what the native engine writes.
  resolveJSON(handle, line) { return this.#withInput(line, (n, out, cap) => this.x.dlroute_resolve_json(handle, this.in, n, out, cap)); }
  explainJSON(handle, line) { return this.#withInput(line, (n, out, cap) => this.x.dlroute_explain_json(handle, this.in, n, out, cap)); }

  // diff compares two handles' decisions (dlroute diff), where the module
  // has the export.
  get canDiff() { return typeof this.x.dlroute_diff === "function"; }
  diff(a, b) { return this.#answer((out, cap) => this.x.dlroute_diff(a, b, out, cap)); }

  #withInput(text, fn) {
    const n = this.#put(encoder.encode(text));
    return this.#answer((out, cap) => fn(n, out, cap));
  }

  #answer(fn) {
    const [status, len] = this.#call(fn);
    return new Result(status, this.#text(len));
  }
}
