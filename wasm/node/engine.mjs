// The engine: the module, compiled once, an instance of it with the rules
// loaded, and the rule sets resolved through it. A trap leaves an instance
// unusable; the next call starts a fresh one and hands it the same rules,
// as Go's wasmhost.Runner does.

import { readFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";

import { DEFAULT_RULES, packRules } from "./rulesdir.mjs";
import { DlrouteError, HostError, INPUT_CODES, LoadError, ModuleError, fromErrorObject } from "./errors.js";
import { Buffers, copyArrayBuffer } from "./host.mjs";
import { ABI_VERSION } from "./client.js";
import { startInstance } from "./instance.mjs";
import { encodeInput } from "./json.mjs";

/** The module the package loads when given none and $DLROUTE_WASM is unset. */
export const DEFAULT_MODULE = new URL("./dlroute.wasm", import.meta.url);

/** How many decisions a rule set remembers by default (Go's engine.DefaultMemoSize). */
export const DEFAULT_MEMO_SIZE = 4096;

// Inputs longer than this are never remembered, as in Go's memo.
const MAX_MEMO_KEY = 512;

const BUILD = "GOOS=wasip1 GOARCH=wasm go build -trimpath -buildmode=c-shared -o wasm/node/dlroute.wasm ./wasm";
const encoder = new TextEncoder();
const decoder = new TextDecoder();

/**
 * load compiles the module, starts it, hands it the rules and resolves to
 * an Engine. See index.d.ts for the options.
 */
export async function load(options = {}) {
  checkOptions(options);
  const module = await compile(options.module ?? process.env.DLROUTE_WASM ?? DEFAULT_MODULE);
  const rules = options.rules ?? DEFAULT_RULES;
  const archive = await toArchive(rules);
  const host = {
    platformVersion: options.platformVersion,
    copyToHost: options.copyToHost === undefined ? copyArrayBuffer : options.copyToHost,
    buffers: new Buffers(),
    wasiWarning: options.wasiWarning === true,
  };
  const runner = new Runner(module, host, options.memoSize ?? DEFAULT_MEMO_SIZE);
  // The embedded rules pass their tests: the module compiles a version
  // when it is first asked for. Rules a caller gives are compiled whole,
  // so that every error in them is reported here.
  runner.load(archive, rootOf(rules), options.rules === undefined);
  return new Engine(runner);
}

/** checkOptions refuses, with a TypeError, options of the wrong kind: a mistake in the calling code, found at load rather than at the first decision. */
function checkOptions(o) {
  const pv = o.platformVersion;
  if (pv != null && typeof pv !== "string" && typeof pv !== "function") throw new TypeError("options.platformVersion must be a string or a function of the device number");
  if (o.copyToHost != null && typeof o.copyToHost !== "function") throw new TypeError("options.copyToHost must be a function from ArrayBuffer to ArrayBuffer, or null");
  if (o.memoSize !== undefined && !(Number.isInteger(o.memoSize) && o.memoSize >= 0)) throw new TypeError("options.memoSize must be an integer, 0 or more");
}

/** compile reads and compiles the module from a path, a URL, bytes or a compiled module. */
async function compile(source) {
  if (source instanceof WebAssembly.Module) return source;
  let bytes = source;
  if (typeof source === "string" || source instanceof URL) {
    const path = source instanceof URL ? fileURLToPath(source) : source;
    try {
      bytes = await readFile(path);
    } catch (err) {
      const named = source === DEFAULT_MODULE ? "no module was given, $DLROUTE_WASM is unset, and there is none at " : "cannot read the module at ";
      throw new ModuleError(`${named}${path}: ${err.code ?? err.message}`, { cause: err, hint: `build it with ${BUILD}` });
    }
  }
  if (ArrayBuffer.isView(bytes)) bytes = new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  else if (bytes instanceof ArrayBuffer) bytes = new Uint8Array(bytes);
  else throw new TypeError("options.module must be a path, a URL, bytes or a WebAssembly.Module");
  if (bytes.length < 8 || bytes[0] !== 0 || bytes[1] !== 0x61 || bytes[2] !== 0x73 || bytes[3] !== 0x6d) {
    throw new ModuleError(`the module is not WebAssembly (${bytes.length} bytes)`, { hint: `build it with ${BUILD}` });
  }
  try {
    return await WebAssembly.compile(bytes);
  } catch (err) {
    throw new ModuleError(`the module does not compile: ${err.message}`, { cause: err });
  }
}

/**
 * rootOf is the name positions give the rules directory, as the Go
 * command's --rules DIR does: the directory as given, or "rules" for the
 * default rules and for an archive.
 */
function rootOf(rules) {
  if (typeof rules === "string") return rules.replace(/\/+$/, "") || "rules";
  if (rules instanceof URL && rules !== DEFAULT_RULES) return fileURLToPath(rules).replace(/\/+$/, "");
  return "rules";
}

/** toArchive is a rules archive from a directory (path or URL) or archive bytes. */
async function toArchive(rules) {
  if (rules instanceof Uint8Array) return rules;
  if (typeof rules === "string" || rules instanceof URL) return packRules(rules);
  throw new TypeError("rules must be a directory (a path or a file: URL) or an archive (a Uint8Array)");
}

/** Runner keeps one live instance with the current rules, and its handles by ref. */
class Runner {
  instance = null;
  handles = new Map();
  archive = null;
  root = "rules";
  gen = 0;

  constructor(module, host, memoSize) {
    this.module = module;
    this.host = host;
    this.memoSize = memoSize;
  }

  /** live returns the instance, starting a fresh one with the current rules when there is none or it trapped. */
  live() {
    if (this.instance && !this.instance.dead) return this.instance;
    this.instance = null;
    const inst = startInstance(this.module, this.host);
    this.handles = new Map();
    if (this.archive) {
      // These rules loaded before, so each version compiles when asked for.
      const r = inst.call("dlroute_load_lazy", this.archive);
      if (r.status !== "ok") throw new ModuleError(`the rules in service do not load into a fresh instance: ${r.status}`);
    }
    this.instance = inst;
    return inst;
  }

  /**
   * load hands the module an archive; on any error the rules in service
   * stay. lazy rules (ones known to compile) are compiled a version at a
   * time, as handle asks for them (dlroute_load_lazy).
   */
  load(archive, root, lazy = false) {
    const name = lazy ? "dlroute_load_lazy" : "dlroute_load";
    const r = this.live().call(name, archive);
    if (r.status === "load_error") throw loadError(r, root);
    if (r.status !== "ok") throw new ModuleError(`${name} answered ${r.status}`);
    this.archive = archive;
    this.root = root;
    this.gen++;
    this.handles = new Map();
  }

  /** call runs a rule set's export on the live instance: (handle, ...args, input, output). */
  call(ref, gen, name, input, ...args) {
    if (gen !== this.gen) {
      throw new DlrouteError(`the rules were reloaded; get ${ref} again`, { code: "no_ruleset", hint: "call engine.ruleset again after engine.load" });
    }
    const inst = this.live();
    return inst.call(name, input, this.handle(inst, ref), ...args);
  }

  /** handle is the live instance's handle for ref, asked of the module once. */
  handle(inst, ref) {
    let h = this.handles.get(ref);
    if (h === undefined) {
      const r = inst.call("dlroute_ruleset", encoder.encode(ref));
      // load_error: a version dlroute_load_lazy left to this call does not compile.
      if (r.status === "load_error") throw loadError(r, this.root);
      if (r.status !== "ok") throw moduleError(r, this.root);
      this.handles.set(ref, (h = r.value));
    }
    return h;
  }
}

/**
 * relabel names the rules directory in an error object's position as root
 * (the module names it "rules").
 */
function relabel(obj, root) {
  if (root !== "rules" && obj.position?.file?.startsWith("rules/")) {
    obj.position.file = root + obj.position.file.slice("rules".length);
  }
  return obj;
}

/** moduleError is the error of a call that did not answer ok, its position relabelled to root. */
/** loadError is a load_error answer's list of error objects as a LoadError. */
function loadError(r, root) {
  return new LoadError(JSON.parse(decoder.decode(r.out)).map((o) => fromErrorObject(relabel(o, root), r.status)));
}

function moduleError(r, root = "rules") {
  let obj;
  try {
    obj = JSON.parse(decoder.decode(r.out));
  } catch {
    // bad_handle and too_small carry no object
  }
  if (obj && typeof obj.code === "string") return fromErrorObject(relabel(obj, root), r.status);
  return new ModuleError(`the module answered ${r.status}`);
}

/** Engine is the loaded module with its rules. */
export class Engine {
  #runner;

  constructor(runner) {
    this.#runner = runner;
  }

  /** The ABI version of the module (wasm/ABI.md): always the one this package speaks. */
  get abiVersion() {
    return ABI_VERSION;
  }

  /**
   * load replaces the rules with a directory or an archive. On any error
   * it throws a LoadError, and the rules in service stay. Rule sets got
   * before must be got again.
   */
  async load(rules) {
    this.#runner.load(await toArchive(rules), rootOf(rules));
  }

  /** ruleset returns a rule set by ref: "jax" (the newest version) or "jax@v2". */
  ruleset(ref = "jax") {
    const runner = this.#runner;
    const inst = runner.live();
    const h = runner.handle(inst, ref);
    const r = inst.call("dlroute_describe", null, h);
    if (r.status !== "ok") throw moduleError(r, runner.root);
    return new RuleSet(runner, JSON.parse(decoder.decode(r.out)));
  }
}

/** RuleSet is one version of a rule set in the module. */
export class RuleSet {
  #runner;
  #gen;
  #memo = new Map();

  constructor(runner, desc) {
    this.#runner = runner;
    this.#gen = runner.gen;
    this.ref = desc.ref;
    this.inputs = desc.inputs;
    this.rules = desc.rules;
    this.deviceTypes = desc.device_types;
  }

  /** resolve decides one input object; see index.d.ts. */
  resolve(input) {
    return JSON.parse(this.resolveJSON(encodeInput(input)));
  }

  /**
   * resolveJSON decides one JSON line (a string or its bytes) and returns
   * the decision's JSON text, byte for byte what `dlroute resolve --json`
   * writes for it.
   */
  resolveJSON(line) {
    const key = typeof line === "string" && line.length <= MAX_MEMO_KEY && this.#runner.memoSize > 0 ? line : undefined;
    if (key !== undefined) {
      const hit = this.#memo.get(key);
      if (hit !== undefined) return hit;
    }
    const text = this.#answer("dlroute_resolve_json", line);
    if (key !== undefined) {
      if (this.#memo.size >= this.#runner.memoSize) this.#memo.delete(this.#memo.keys().next().value);
      this.#memo.set(key, text);
    }
    return text;
  }

  /**
   * resolveMany decides each input object in turn. It never throws for an
   * input: each entry is a decision, or {input_error: {...}} or
   * {eval_error: {...}} as `dlroute resolve --json` writes for the line
   * (line counts from 1).
   */
  resolveMany(inputs) {
    const out = [];
    let line = 0;
    for (const input of inputs) {
      line++;
      try {
        out.push(this.resolve(input));
      } catch (err) {
        if (!(err instanceof DlrouteError)) throw err;
        out.push(errorEntry(line, err));
      }
    }
    return out;
  }

  /** explain decides one input object and says how: {decision, trace}. */
  explain(input) {
    return JSON.parse(this.#answer("dlroute_explain_json", encodeInput(input)));
  }

  /**
   * exchange decides one input of an exchange rule set and carries the
   * decision out for buffer (an ArrayBuffer holding the array's bytes); see
   * index.d.ts.
   */
  exchange(input, buffer) {
    if (!(buffer instanceof ArrayBuffer)) throw new TypeError("exchange takes the array's bytes as an ArrayBuffer");
    const line = encoder.encode(encodeInput(input));
    const buffers = this.#runner.host.buffers;
    const h = buffers.add(buffer);
    let r;
    let copyError;
    let made;
    try {
      r = this.#runner.call(this.ref, this.#gen, "dlroute_exchange", line, h);
    } finally {
      copyError = buffers.copyErrors.get(h);
      made = buffers.release(h);
    }
    if (r.status !== "ok") {
      const err = moduleError(r, this.#runner.root);
      if (err.code === "copy_failed" && copyError !== undefined) {
        throw new HostError(`copying the array into host memory failed: ${copyError?.message ?? copyError}`, { code: err.code, hint: err.hint, cause: copyError });
      }
      throw err;
    }
    const answer = JSON.parse(decoder.decode(r.out));
    if (answer.buffer === null) return { decision: answer.decision, buffer: null, copied: false };
    if (answer.buffer === h) return { decision: answer.decision, buffer, copied: false };
    const copy = made.get(answer.buffer);
    if (copy === undefined) throw new ModuleError(`dlroute_exchange exported buffer ${answer.buffer}, which is neither the source nor a copy of it`);
    return { decision: answer.decision, buffer: copy, copied: true };
  }

  /** #answer runs a JSON export: its output text, or the error it answered. */
  #answer(name, line) {
    const r = this.#runner.call(this.ref, this.#gen, name, typeof line === "string" ? encoder.encode(line) : line);
    if (r.status !== "ok") throw moduleError(r, this.#runner.root);
    return decoder.decode(r.out);
  }
}

/** errorEntry is resolveMany's entry for an input it could not decide, as the command line's. */
export function errorEntry(line, err) {
  const kind = INPUT_CODES.includes(err.code) ? "input_error" : "eval_error";
  const o = { line, code: err.code, message: err.message };
  if (err.position) o.position = err.position;
  if (err.hint) o.hint = err.hint;
  return { [kind]: o };
}
