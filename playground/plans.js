// The decision module (wasm/decision, ABI version 3, its ABI.md) in the
// page: the page's WASI (wasi.js), a set of plans (plans.bin), and the
// calls that take a version's plan from the set and decide or explain
// JSON lines with it. It answers what the native engine's ResolveJSON
// and ExplainJSON answer, byte for byte. It follows
// wasm/decision/decision.mjs, the Node.js client, which imports node:wasi
// and so cannot run here; the shared client (wasm/node's decision.js,
// served beside this file) has no explain yet.
//
// The page runs it on its main thread (first.js): a decision is a short
// call, and the module imports only its two host functions (answered as
// a host that reads no machine and copies nothing) and starts at once. A Decisions
// owns one instance; a call that traps leaves it
// unusable, and the call throws: the next call starts a fresh instance
// from the same module.

import { createWASI } from "./wasi.js";

// The ABI version this client speaks.
export const DECISION_ABI_VERSION = 3;

// The statuses of ABI.md, by number.
const STATUS = ["ok", "input_error", "eval_error", "load_error", "no_ruleset", "bad_handle", undefined, "too_small", undefined, "host_error"];

// The module's host functions (ABI.md, Imports), as a page answers them:
// status 2, a host that reads no machine (a line that leaves
// platform_version out is checked as it is) and has no copier.
const HOST = { platform_version: () => 2, copy_to_host: () => 2 };
const TOO_SMALL = 7;

const encoder = new TextEncoder();
const decoder = new TextDecoder();

// Answer is a decision's or an explanation's answer, as engine.js's
// Result reads (decide.js takes either).
export class Answer {
  constructor(status, text) {
    this.status = status;
    this.text = text;
  }
  get ok() { return this.status === "ok"; }
  json() { return this.text === "" ? null : JSON.parse(this.text); }
}

export class Decisions {
  // start starts the compiled module with the set of plans (plans.bin's
  // bytes and its ETag), which the page fetched (first.js).
  static async start(module, plans, etag, print) {
    const d = new Decisions(module, plans, etag, print);
    await d.restart();
    return d;
  }

  constructor(module, plans, etag, print) {
    this.module = module;
    this.plans = plans;
    this.etag = etag; // the plans' ETag, which rules.json names
    this.print = print;
    this.x = null;
    this.workMs = 0; // the time spent in decisions, for the page's measures (decide.js)
    this.wasm = undefined; // the module's resource timing, for the status line (first.js)
  }

  // restart starts a fresh instance: after a trap, or for other plans.
  async restart() {
    const wasi = createWASI(this.print);
    const instance = await WebAssembly.instantiate(this.module, { wasi_snapshot_preview1: wasi.imports, dlroute_host: HOST });
    wasi.setMemory(instance.exports.memory);
    this.x = instance.exports;
    this.x._initialize();
    const version = this.x.dlroute_abi_version?.();
    if (version !== DECISION_ABI_VERSION) throw new Error(`decision.wasm speaks ABI version ${version}; the page speaks ${DECISION_ABI_VERSION}`);
    if (typeof this.x.dlroute_explain !== "function") throw new Error("decision.wasm has no dlroute_explain: it is older than the page");
    this.handles = new Map(); // ref -> handle, or the load's {status, text}
    this.out = this.#alloc(4096);
    this.in = this.#alloc(4096);
    this.set = this.#put({ ptr: 0, cap: 0 }, this.plans);
    performance.mark("dlroute:initialized");
  }

  // takeSet makes set (plans.bin's bytes, with its ETag) the plans that
  // versions are loaded from, where the instance started with a part of
  // them (first.json's one version): the versions loaded stay, as the
  // module keeps no reference to a set; other plans start afresh.
  async takeSet(set, etag) {
    const same = etag === this.etag;
    Object.assign(this, { plans: set, etag });
    if (!same || !this.x) return this.restart();
    for (const [ref, h] of this.handles) if (typeof h !== "number") this.handles.delete(ref);
    this.set = this.#put(this.set, set);
  }

  // follow takes the plans at url, when rules.json names others than
  // these (the rules changed on the server): a fresh instance with them.
  async follow(url, etag) {
    if (etag === this.etag) return;
    const plans = await fetchPlans(url);
    Object.assign(this, { plans: plans.bytes, etag: plans.etag });
    await this.restart();
  }

  // decide decides one JSON line with the plan of ref ("jax@v3"), and
  // answers an Answer: "ok" and the decision's JSON, or
  // "input_error" / "eval_error" and an error object's JSON; a version
  // the plans lack answers no_ruleset, bytes that are not plans
  // load_error, with the module's error.
  decide(ref, line) { return this.#line("dlroute_decide", ref, line); }

  // explain is decide with the trace: the explanation's JSON
  // ({"decision":..., "trace":...}) with status "ok".
  explain(ref, line) { return this.#line("dlroute_explain", ref, line); }

  async #line(name, ref, line) {
    if (!this.x) await this.restart(); // the last call trapped
    const t0 = performance.now();
    try {
      const h = this.#handle(ref);
      if (typeof h !== "number") return new Answer(h.status, h.text);
      const bytes = encoder.encode(line);
      this.#put(this.in, bytes);
      const r = this.#call((out, cap) => this.x[name](h, this.in.ptr, bytes.length, out, cap));
      return new Answer(r.status, r.text);
    } catch (e) {
      this.x = null; // a trap leaves the instance unusable
      throw e;
    } finally {
      this.workMs += performance.now() - t0;
    }
  }

  #handle(ref) {
    if (!this.handles.has(ref)) {
      const r = this.#put({ ptr: 0, cap: 0 }, encoder.encode(ref));
      const got = this.#call((out, cap) => this.x.dlroute_load_set(this.set.ptr, this.set.len, r.ptr, r.len, out, cap), true);
      this.x.dlroute_free(r.ptr);
      this.handles.set(ref, got.status === "ok" ? got.value : got);
    }
    return this.handles.get(ref);
  }

  #alloc(cap) {
    const ptr = this.x.dlroute_alloc(cap);
    if (ptr === 0) throw new Error(`decision.wasm: dlroute_alloc(${cap}) failed`);
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

  // #call runs f(out, cap), growing the output on too_small, and answers
  // {status, text}, or {status, value} for a load's handle. A module that
  // answers outside ABI.md is broken: it throws.
  #call(f, handle = false) {
    for (let i = 0; i < 3; i++) {
      const r = f(this.out.ptr, this.out.cap);
      const status = Number(r >> 32n);
      const value = Number(r & 0xffffffffn);
      if (status === TOO_SMALL) {
        if (value <= this.out.cap) throw new Error(`decision.wasm: too_small asking for ${value} bytes of ${this.out.cap}`);
        this.x.dlroute_free(this.out.ptr);
        this.out = this.#alloc(value);
        continue;
      }
      const name = STATUS[status];
      if (!name) throw new Error(`decision.wasm: status ${status} is not in ABI.md`);
      if ((name === "ok" && handle) || name === "bad_handle") return { status: name, value, text: "" };
      if (value > this.out.cap) throw new Error(`decision.wasm: an output of ${value} bytes in a buffer of ${this.out.cap}`);
      return { status: name, text: decoder.decode(new Uint8Array(this.x.memory.buffer, this.out.ptr, value)) };
    }
    throw new Error("decision.wasm: too_small three times in one call");
  }
}

async function fetchPlans(url) {
  const resp = await fetch(url, { cache: "no-cache" });
  if (!resp.ok) throw new Error(`fetching ${url}: ${resp.status} ${resp.statusText}`);
  return { bytes: new Uint8Array(await resp.arrayBuffer()), etag: resp.headers.get("ETag") ?? "" };
}
