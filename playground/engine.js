// The dlroute module in the page. The calls, their statuses, the ABI
// version and every check of what the module answers are the shared ABI
// client's (client.js, from wasm/node, which package playground serves
// beside this file); this file starts the module with the page's WASI
// (wasi.js) and host functions, and gives the page its answers as text.
// An Engine owns one instance; a call that traps leaves it unusable, and
// restart() makes a fresh one from the same compiled module.

import { encodeArchive } from "./archive.js";
import { ABI_VERSION, Client, HOST_MODULE, HOST_UNAVAILABLE, STATUS, checkModule } from "./client.js";
import { ModuleError } from "./errors.js";
import { createWASI } from "./wasi.js";

export { ABI_VERSION };

// Statuses by name, as ABI.md "Results" numbers them.
export const Status = Object.freeze(Object.fromEntries(STATUS.map((name, code) => [name, code])));

// The exports the page calls (ABI.md, "Exports" and "Exports for
// editors"); dlroute_diff is used where the module has it (canDiff).
const PAGE_EXPORTS = ["dlroute_load", "dlroute_load_lazy", "dlroute_ruleset", "dlroute_describe", "dlroute_resolve_json", "dlroute_explain_json", "dlroute_test", "dlroute_release"];

// The host functions a page offers: it reads no machine (unavailable:
// an input without platform_version then gets the native engine's
// missing_field) and holds no buffers to copy.
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
    this.status = status;
    this.text = text;
  }
  get ok() { return this.status === "ok"; }
  json() { return this.text === "" ? null : JSON.parse(this.text); }
}

export class Engine {
  // instantiate fetches, compiles and starts the module at url. It
  // compiles while the bytes arrive (WebAssembly.compileStreaming) when
  // the server says application/wasm, and after the download otherwise,
  // as some static servers send another type.
  static async instantiate(url, print) {
    const resp = await fetch(url);
    if (!resp.ok) throw new Error(`fetching ${url}: ${resp.status} ${resp.statusText}`);
    let module;
    if ((resp.headers.get("Content-Type") || "").startsWith("application/wasm") && WebAssembly.compileStreaming) {
      module = await WebAssembly.compileStreaming(resp);
    } else {
      module = await WebAssembly.compile(await resp.arrayBuffer());
    }
    performance.mark("dlroute:compiled");
    checkModule(module);
    const engine = new Engine(module, print);
    await engine.restart();
    return engine;
  }

  // The Engine of a compiled module; restart() starts it.
  constructor(module, print) {
    this.module = module;
    this.print = print;
    this.client = null;
    this.parsed = null;
  }

  // restart throws the instance away, if any, and starts another from
  // the compiled module: after a trap, or to free what the old one held.
  async restart() {
    const wasi = createWASI(this.print);
    const instance = await WebAssembly.instantiate(this.module, { wasi_snapshot_preview1: wasi.imports, [HOST_MODULE]: hostImports });
    wasi.setMemory(instance.exports.memory);
    try {
      instance.exports._initialize();
    } catch (e) {
      throw new ModuleError(`starting the module: ${e.message}`, { cause: e });
    }
    performance.mark("dlroute:initialized");
    this.client = new Client(instance.exports, PAGE_EXPORTS);
  }

  // memoryBytes is the instance's memory size, for the page's status line.
  get memoryBytes() { return this.client.memoryBytes; }

  // load hands a rules directory to the module: files maps
  // "jax/v3/rules.yaml" to its text. ok, or load_error with the errors.
  // The served rules' parsed.bin, when set (setParsed), goes with them:
  // the module takes each expression it holds instead of parsing it.
  load(files) {
    return this.#answer("dlroute_load", this.#archive(files));
  }

  // loadLazy is load for the rules as served: it compiles nothing yet;
  // ruleset compiles the version it names, without its tests.yaml, which
  // test compiles when it is first asked (ABI.md, dlroute_load_lazy). The
  // page's first decision waits for no test to compile.
  loadLazy(files) {
    return this.#answer("dlroute_load_lazy", this.#archive(files));
  }

  #archive(files) {
    return encodeArchive(this.parsed ? [...files, ["parsed.bin", this.parsed]] : files);
  }

  // setParsed keeps rules.json's "parsed", the served rules' parsed.bin
  // in base64 (engine.ParsedFile), for every load; none clears it.
  setParsed(base64) {
    this.parsed = base64 ? fromBase64(base64) : null;
  }

  // ruleset returns {handle} for "jax" or "jax@v2", or {error}.
  ruleset(ref) {
    const r = this.client.call("dlroute_ruleset", encoder.encode(ref));
    if (r.status === "ok") return { handle: r.value };
    return { error: new Result(r.status, decoder.decode(r.out)) };
  }

  describe(handle) { return this.#answer("dlroute_describe", null, handle); }
  test(handle) { return this.#answer("dlroute_test", null, handle); }
  release(handle) { this.client.release(handle); }

  // resolveJSON and explainJSON take one JSON object, a line of
  // `dlroute resolve --json`, and answer what the native engine writes.
  resolveJSON(handle, line) { return this.#answer("dlroute_resolve_json", encoder.encode(line), handle); }
  explainJSON(handle, line) { return this.#answer("dlroute_explain_json", encoder.encode(line), handle); }

  // diff compares two handles' decisions (dlroute diff), where the module
  // has the export.
  get canDiff() { return this.client.has("dlroute_diff"); }
  diff(a, b) { return this.#answer("dlroute_diff", null, a, b); }

  #answer(name, input, ...args) {
    const r = this.client.call(name, input, ...args);
    return new Result(r.status, decoder.decode(r.out));
  }
}

// fromBase64 decodes base64, with Uint8Array.fromBase64 where the browser
// has it, else a byte at a time from atob: Uint8Array.from with a
// mapping function took 17 ms for the 200 KB of the embedded rules'
// parsed.bin in Node, this loop 3 ms, on the first decision's way.
function fromBase64(s) {
  if (Uint8Array.fromBase64) return Uint8Array.fromBase64(s);
  const bin = atob(s);
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out;
}
