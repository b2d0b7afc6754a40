// The engine. The embedded rules are decided and explained by the
// decision module (wasm/decision/ABI.md, decision.js) with the plans the
// Go engine compiled (rules/plans.bin): no CEL compiler is loaded for
// them. The compiler module (wasm/ABI.md, client.js) is loaded only where
// plans do not reach: rules handed as a directory or an archive, which it
// must compile, at that call; and, lazily, at the first call that needs
// what a plan lacks (exchange, a rule set's description, a release ref).
// A trap leaves an instance unusable; the next call starts a fresh one
// and hands it the same rules or plans, as Go's wasmhost.Runner does.

import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

import { DEFAULT_RULES, packRules, packRulesSync } from "./rulesdir.mjs";
import { DlrouteError, HostError, INPUT_CODES, LoadError, ModuleError, fromErrorObject } from "./errors.js";
import { Buffers, copyArrayBuffer } from "./host.mjs";
import { ABI_VERSION } from "./client.js";
import { DECISION_BUILD, planInputs, readPlanSet } from "./decision.js";
import { startDecisionInstance, startInstance } from "./instance.mjs";
import { encodeInput, goString } from "./json.mjs";

/** The compiler module the package loads when given none and $DLROUTE_WASM is unset. */
export const DEFAULT_MODULE = new URL("./dlroute.wasm", import.meta.url);

/**
 * The decision module the package decides the embedded rules with when
 * $DLROUTE_DECISION_WASM is unset: the one checked in at
 * wasm/decision/decision.wasm, as the plans are at rules/plans.bin.
 */
export const DEFAULT_DECISION_MODULE = new URL("../decision/decision.wasm", import.meta.url);

/** The embedded rules' plans: rules/plans.bin, made by `go generate ./rules`. */
export const DEFAULT_PLANS = new URL("plans.bin", DEFAULT_RULES);

/** How many decisions a rule set remembers by default (Go's engine.DefaultMemoSize). */
export const DEFAULT_MEMO_SIZE = 4096;

// Inputs longer than this are never remembered, as in Go's memo.
const MAX_MEMO_KEY = 512;

// A ref that names a release ("jax==0.10.2"), as Go's engine.ReleaseRef.
const RELEASE_REF = "==";

const BUILD_HINT = "build it with GOOS=wasip1 GOARCH=wasm go build -trimpath -buildmode=c-shared -o wasm/node/dlroute.wasm ./wasm";
const encoder = new TextEncoder();
const decoder = new TextDecoder();

/**
 * load starts the engine and resolves to an Engine. See index.d.ts for
 * the options: without rules it starts the decision module with the
 * embedded rules' plans, and reads no compiler module; with rules it
 * compiles the compiler module and hands them to it.
 */
export async function load(options = {}) {
  checkOptions(options);
  const host = {
    platformVersion: options.platformVersion,
    copyToHost: options.copyToHost === undefined ? copyArrayBuffer : options.copyToHost,
    buffers: new Buffers(),
    wasiWarning: options.wasiWarning === true,
  };
  const core = new Core(host, options.memoSize ?? DEFAULT_MEMO_SIZE, options.module ?? process.env.DLROUTE_WASM ?? DEFAULT_MODULE);
  if (options.rules === undefined) {
    core.usePlans(process.env.DLROUTE_DECISION_WASM ?? DEFAULT_DECISION_MODULE, DEFAULT_PLANS);
  } else {
    await core.useRules(options.rules);
  }
  return new Engine(core);
}

/** checkOptions refuses, with a TypeError, options of the wrong kind: a mistake in the calling code, found at load rather than at the first decision. */
function checkOptions(o) {
  const pv = o.platformVersion;
  if (pv != null && typeof pv !== "string" && typeof pv !== "function") throw new TypeError("options.platformVersion must be a string or a function of the device number");
  if (o.copyToHost != null && typeof o.copyToHost !== "function") throw new TypeError("options.copyToHost must be a function from ArrayBuffer to ArrayBuffer, or null");
  if (o.memoSize !== undefined && !(Number.isInteger(o.memoSize) && o.memoSize >= 0)) throw new TypeError("options.memoSize must be an integer, 0 or more");
  const m = o.module;
  if (m !== undefined && !(typeof m === "string" || m instanceof URL || m instanceof WebAssembly.Module || ArrayBuffer.isView(m) || m instanceof ArrayBuffer)) {
    throw new TypeError("options.module must be a path, a URL, bytes or a WebAssembly.Module");
  }
}

/**
 * moduleBytes reads a module from a path or a URL, or takes its bytes,
 * and checks that they are WebAssembly. what says which module it is: the
 * file it is read from when none is named, the variable that names one,
 * and the hint that says how to get one.
 */
function moduleBytes(source, { fallback, envVar, hint }) {
  let bytes = source;
  if (typeof source === "string" || source instanceof URL) {
    const path = source instanceof URL ? fileURLToPath(source) : source;
    try {
      bytes = readFileSync(path);
    } catch (err) {
      const named = source === fallback ? `no module was given, $${envVar} is unset, and there is none at ` : "cannot read the module at ";
      throw new ModuleError(`${named}${path}: ${err.code ?? err.message}`, { cause: err, hint });
    }
  }
  if (ArrayBuffer.isView(bytes)) bytes = new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  else if (bytes instanceof ArrayBuffer) bytes = new Uint8Array(bytes);
  return checkWasm(bytes, hint);
}

function checkWasm(bytes, hint) {
  if (bytes.length < 8 || bytes[0] !== 0 || bytes[1] !== 0x61 || bytes[2] !== 0x73 || bytes[3] !== 0x6d) {
    throw new ModuleError(`the module is not WebAssembly (${bytes.length} bytes)`, { hint });
  }
  return bytes;
}

const COMPILER = { fallback: DEFAULT_MODULE, envVar: "DLROUTE_WASM", hint: BUILD_HINT };
const DECIDER = { fallback: DEFAULT_DECISION_MODULE, envVar: "DLROUTE_DECISION_WASM", hint: DECISION_BUILD };

/** compile reads and compiles the compiler module, in the background: for load and engine.load. */
async function compile(source) {
  if (source instanceof WebAssembly.Module) return source;
  const bytes = moduleBytes(source, COMPILER);
  try {
    return await WebAssembly.compile(bytes);
  } catch (err) {
    throw new ModuleError(`the module does not compile: ${err.message}`, { cause: err });
  }
}

/** compileSync is compile on the calling thread: for a synchronous call that needs the compiler module first. */
function compileSync(source, what = COMPILER) {
  if (source instanceof WebAssembly.Module) return source;
  const bytes = moduleBytes(source, what);
  try {
    return new WebAssembly.Module(bytes);
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

/**
 * Core is an engine's state: the rules in service, as plans in the
 * decision module (decisions) or as rules in the compiler module, and the
 * compiler module once something has needed it. gen counts the rules put
 * in service: a rule set got before a reload refuses to answer.
 */
class Core {
  gen = 0;
  /** The decision module with the embedded rules' plans, while they are in service; else null. */
  decisions = null;
  #compiler = null;

  constructor(host, memoSize, compilerSource) {
    this.host = host;
    this.memoSize = memoSize;
    this.compilerSource = compilerSource;
  }

  /** usePlans starts the decision module with a set of plans and puts them in service. */
  usePlans(moduleSource, plansSource) {
    const module = compileSync(moduleSource, DECIDER);
    let set;
    try {
      set = readFileSync(fileURLToPath(plansSource));
    } catch (err) {
      throw new ModuleError(`cannot read the embedded rules' plans at ${fileURLToPath(plansSource)}: ${err.code ?? err.message}`, { cause: err, hint: "make them with go generate ./rules" });
    }
    const decisions = new Decisions(module, readPlanSet(set));
    decisions.live(); // a module that cannot serve is load's error
    this.decisions = decisions;
    this.gen++;
  }

  /**
   * useRules hands the compiler module rules (a directory or an archive)
   * and puts them in service; on any error the rules in service stay.
   */
  async useRules(rules) {
    const archive = await toArchive(rules);
    const runner = this.#compiler ?? new Runner(await compile(this.compilerSource), this.host, this.memoSize);
    runner.load(archive, rootOf(rules));
    this.#compiler = runner;
    this.decisions = null;
    this.gen++;
  }

  /**
   * compiler is the compiler module's runner, started now, on the calling
   * thread, with the embedded rules (compiled a version at a time) when no
   * call has needed it before.
   */
  compiler() {
    if (this.#compiler === null) {
      const runner = new Runner(compileSync(this.compilerSource), this.host, this.memoSize);
      // The embedded rules pass their tests: each version is compiled
      // when it is first asked for.
      runner.load(packRulesSync(DEFAULT_RULES), "rules", true);
      this.#compiler = runner;
    }
    return this.#compiler;
  }

  /** ruleset is the RuleSet of ref in the rules in service. */
  ruleset(ref) {
    const d = this.decisions;
    if (d === null) {
      const desc = this.compiler().describe(ref);
      return new RuleSet(this, desc.ref, null, desc);
    }
    if (ref.includes(RELEASE_REF)) {
      // Which version covers a release is in the manifests, which plans
      // do not hold: the compiler module answers it once.
      const desc = this.compiler().describe(ref);
      return new RuleSet(this, desc.ref, d, desc);
    }
    return new RuleSet(this, d.resolve(ref), d, null);
  }
}

/**
 * Decisions keeps one live instance of the decision module, the set of
 * plans it takes versions from, and its handles by ref.
 */
class Decisions {
  #client = null;
  #handles = new Map();
  #inputs = new Map();

  constructor(module, plans) {
    this.module = module;
    this.plans = plans;
  }

  /** live returns the instance, starting a fresh one when there is none or it trapped. */
  live() {
    if (this.#client !== null && !this.#client.dead) return this.#client;
    this.#client = null;
    this.#handles = new Map();
    this.#client = startDecisionInstance(this.module);
    return this.#client;
  }

  /** decide decides line with ref's plan: {status, text}, as DecisionClient.decide; op "explain" explains it. */
  decide(ref, line, op = "decide") {
    const client = this.live();
    const h = this.#handles.get(ref) ?? this.handle(ref);
    const r = op === "decide" ? client.decide(h, line) : client.explain(h, line);
    if (r.status === "bad_handle") throw new ModuleError(`the decision module does not know the handle of ${ref}`);
    return r;
  }

  /**
   * handle is the live instance's handle of ref's plan, loaded once. A
   * plan the module refuses (one of another format version) is a
   * ModuleError with the module's message.
   */
  handle(ref) {
    const client = this.live();
    let h = this.#handles.get(ref);
    if (h === undefined) {
      const r = client.loadPlan(this.plans.get(ref));
      if (r.status !== "ok") {
        const e = JSON.parse(r.text)[0] ?? {};
        throw new ModuleError(`the plan of ${ref} does not load: ${e.message}`, {
          hint: "make the plans and the decision module from the same source: go generate ./rules ./wasm/decision",
        });
      }
      this.#handles.set(ref, (h = r.handle));
    }
    return h;
  }

  /** declares reports whether ref's plan declares the input name. */
  declares(ref, name) {
    let inputs = this.#inputs.get(ref);
    if (inputs === undefined) this.#inputs.set(ref, (inputs = planInputs(this.plans.get(ref))));
    return inputs.some((i) => i.name === name);
  }

  /**
   * resolve is the exact ref of a plan ("jax@v3") for ref: "jax" for its
   * newest version, "jax@v2" for that one. A ref that names none throws
   * no_ruleset with the engine's message and hint (Go's
   * engine.Catalog.RuleSet).
   */
  resolve(ref) {
    if (this.plans.has(ref)) return ref;
    const at = ref.indexOf("@");
    const name = at < 0 ? ref : ref.slice(0, at);
    const versions = [];
    const names = new Set();
    for (const r of this.plans.keys()) {
      const [n, v] = [r.slice(0, r.indexOf("@")), r.slice(r.indexOf("@") + 1)];
      names.add(n);
      if (n === name && parseVersion(v)) versions.push(v);
    }
    versions.sort(compareVersions);
    if (versions.length === 0) {
      throw new DlrouteError(`no rule set ${goQuote(name)}`, { code: "no_ruleset", hint: `loaded: ${[...names].sort().join(", ")}` });
    }
    if (at < 0) return `${name}@${versions[versions.length - 1]}`;
    throw new DlrouteError(`rule set ${name} has no version ${goQuote(ref.slice(at + 1))}`, { code: "no_ruleset", hint: `versions: ${versions.join(", ")}` });
  }
}

/** parseVersion is a version's numbers ("v1.2": [1, 2]), or null for a directory that is not a version, as Go's. */
function parseVersion(v) {
  if (!/^v(0|[1-9][0-9]*)(\.(0|[1-9][0-9]*))*$/.test(v)) return null;
  return v.slice(1).split(".").map(Number);
}

function compareVersions(a, b) {
  const [x, y] = [parseVersion(a), parseVersion(b)];
  for (let i = 0; i < Math.min(x.length, y.length); i++) if (x[i] !== y[i]) return x[i] - y[i];
  return x.length - y.length;
}

/** goQuote is Go's strconv.Quote (%q) of s, for the engine's messages. */
function goQuote(s) {
  const named = { 7: "\\a", 8: "\\b", 9: "\\t", 10: "\\n", 11: "\\v", 12: "\\f", 13: "\\r" };
  let out = '"';
  for (let ch of s) {
    const c = ch.codePointAt(0);
    if (c >= 0xd800 && c <= 0xdfff) ch = "\ufffd"; // a lone surrogate reaches Go as U+FFFD
    if (ch === '"' || ch === "\\") out += "\\" + ch;
    else if (named[c]) out += named[c];
    else if (c < 0x20 || c === 0x7f) out += "\\x" + c.toString(16).padStart(2, "0");
    else if (c === 0x20 || /[\p{L}\p{M}\p{N}\p{P}\p{S}]/u.test(ch)) out += ch;
    else out += c < 0x10000 ? "\\u" + c.toString(16).padStart(4, "0") : "\\U" + c.toString(16).padStart(8, "0");
  }
  return out + '"';
}

/** Runner keeps one live instance of the compiler module with the current rules, and its handles by ref. */
class Runner {
  instance = null;
  handles = new Map();
  archive = null;
  root = "rules";

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
    this.handles = new Map();
  }

  /** call runs a rule set's export on the live instance: (handle, ...args, input, output). */
  call(ref, name, input, ...args) {
    const inst = this.live();
    return inst.call(name, input, this.handle(inst, ref), ...args);
  }

  /** describe is the module's description of ref: {ref, inputs, rules, device_types}. */
  describe(ref) {
    const r = this.call(ref, "dlroute_describe", null);
    if (r.status !== "ok") throw moduleError(r, this.root);
    return JSON.parse(decoder.decode(r.out));
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

/** loadError is a load_error answer's list of error objects as a LoadError. */
function loadError(r, root) {
  return new LoadError(JSON.parse(decoder.decode(r.out)).map((o) => fromErrorObject(relabel(o, root), r.status)));
}

/** moduleError is the error of a call that did not answer ok, its position relabelled to root. */
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
  #core;

  constructor(core) {
    this.#core = core;
  }

  /** The ABI version of the compiler module (wasm/ABI.md): always the one this package speaks. */
  get abiVersion() {
    return ABI_VERSION;
  }

  /**
   * load replaces the rules with a directory or an archive, which the
   * compiler module compiles. On any error it throws a LoadError, and the
   * rules in service stay. Rule sets got before must be got again.
   */
  async load(rules) {
    await this.#core.useRules(rules);
  }

  /** ruleset returns a rule set by ref: "jax" (the newest version), "jax@v2" or "jax==0.10.2". */
  ruleset(ref = "jax") {
    return this.#core.ruleset(ref);
  }
}

/**
 * RuleSet is one version of a rule set. With the embedded rules it
 * decides and explains with its plan in the decision module
 * (decisions); exchange and its description need the compiler module.
 */
export class RuleSet {
  #core;
  #gen;
  #decisions;
  #desc;
  #asks;
  #memo;

  constructor(core, ref, decisions, desc) {
    this.#core = core;
    this.#memo = core.memoSize > 0 ? new Memo(core.memoSize) : null;
    this.#gen = core.gen;
    this.#decisions = decisions;
    this.#desc = desc;
    decisions?.handle(ref); // a plan the module refuses is ruleset()'s error
    // Whether a platform_version left out is asked of the host, as the
    // compiler module asks it of a version that declares one.
    this.#asks = decisions !== null && decisions.declares(ref, "platform_version");
    /** "name@version". */
    this.ref = ref;
  }

  /** The declared inputs. */
  get inputs() {
    return this.#describe().inputs;
  }

  /** The rule ids, in order. */
  get rules() {
    return this.#describe().rules;
  }

  /** The device-type table. */
  get deviceTypes() {
    return this.#describe().device_types;
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
    const memo = this.#memo;
    const key = memo !== null && typeof line === "string" && line.length <= MAX_MEMO_KEY ? line : undefined;
    if (key !== undefined) {
      const hit = memo.get(key);
      if (hit !== undefined) return hit;
    }
    const text = this.#decisions === null ? this.#answer("dlroute_resolve_json", line) : this.#decide(line);
    if (key !== undefined) memo.set(key, text);
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
    const line = encodeInput(input);
    return JSON.parse(this.#decisions === null ? this.#answer("dlroute_explain_json", line) : this.#decide(line, "explain"));
  }

  /**
   * exchange decides one input of an exchange rule set and carries the
   * decision out for buffer (an ArrayBuffer holding the array's bytes); see
   * index.d.ts. It needs the compiler module, which holds the copier.
   */
  exchange(input, buffer) {
    if (!(buffer instanceof ArrayBuffer)) throw new TypeError("exchange takes the array's bytes as an ArrayBuffer");
    const line = encoder.encode(encodeInput(input));
    this.#current();
    const runner = this.#core.compiler();
    const buffers = this.#core.host.buffers;
    const h = buffers.add(buffer);
    let r;
    let copyError;
    let made;
    try {
      r = runner.call(this.ref, "dlroute_exchange", line, h);
    } finally {
      copyError = buffers.copyErrors.get(h);
      made = buffers.release(h);
    }
    if (r.status !== "ok") {
      const err = moduleError(r, runner.root);
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

  /** #current throws unless the rules this rule set came from are still in service. */
  #current() {
    if (this.#gen !== this.#core.gen) {
      throw new DlrouteError(`the rules were reloaded; get ${this.ref} again`, { code: "no_ruleset", hint: "call engine.ruleset again after engine.load" });
    }
  }

  #describe() {
    if (this.#desc === null) {
      this.#current();
      this.#desc = this.#core.compiler().describe(this.ref);
    }
    return this.#desc;
  }

  /** #answer runs a JSON export of the compiler module: its output text, or the error it answered. */
  #answer(name, line) {
    this.#current();
    const runner = this.#core.compiler();
    const r = runner.call(this.ref, name, typeof line === "string" ? encoder.encode(line) : line);
    if (r.status !== "ok") throw moduleError(r, runner.root);
    return decoder.decode(r.out);
  }

  /** #decide decides (or, op "explain", explains) line with the plan: the answer's JSON, or the error it answered. */
  #decide(line, op = "decide") {
    this.#current();
    let r = this.#decisions.decide(this.ref, line, op);
    if (r.status === "ok") return r.text;
    if (r.status === "input_error" && this.#asks && this.#core.host.platformVersion != null) {
      r = this.#askHost(line, r, op);
      if (r.status === "ok") return r.text;
    }
    throw fromErrorObject(JSON.parse(r.text), r.status);
  }

  /**
   * #askHost decides again an input that left platform_version out, with
   * the host's answer for its device filled in, as the compiler module
   * does (wasm/internal/guest: decodeAsking): only after the input was refused
   * with missing_field, for a JSON object without the field; the device
   * is its local_hardware_id when that is a number, else 0. No answer
   * leaves the refusal r as it is; a host that fails is a HostError.
   */
  #askHost(line, r, op) {
    if (JSON.parse(r.text).code !== "missing_field") return r;
    const text = typeof line === "string" ? line : decoder.decode(line);
    let obj;
    try {
      obj = JSON.parse(text);
    } catch {
      return r;
    }
    if (obj === null || typeof obj !== "object" || Array.isArray(obj) || Object.hasOwn(obj, "platform_version")) return r;
    const id = obj.local_hardware_id;
    const device = typeof id === "number" ? Math.trunc(id) : 0;
    const pv = this.#core.host.platformVersion;
    let version;
    let failed = (device | 0) < 0;
    if (!failed) {
      try {
        version = typeof pv === "function" ? pv(device | 0) : pv;
        failed = version != null && typeof version !== "string";
      } catch {
        failed = true;
      }
    }
    if (failed) {
      throw new HostError(`input platform_version is missing and the host could not read device ${device}: the host could not read it`, { code: "missing_field" });
    }
    if (version == null) return r;
    const brace = text.indexOf("{") + 1;
    const rest = text.slice(brace);
    const patched = `${text.slice(0, brace)}"platform_version":${goString(version)}${/^\s*\}/.test(rest) ? "" : ","}${rest}`;
    return this.#decisions.decide(this.ref, patched, op);
  }
}

/**
 * Memo remembers a rule set's answers by input line: between about half
 * and all of size of the latest, in two generations. A new answer goes
 * into the young one; when that is full it becomes the old one, and the
 * old one is dropped; an answer found in the old one moves to the young
 * one, so the lines a process sees again and again stay. Each call costs
 * a Map's get or set whatever the rate of new lines: evicting the oldest
 * entry of one Map, one at a time, cost 2 µs a new line.
 */
class Memo {
  #young = new Map();
  #old = new Map();

  constructor(size) {
    this.half = Math.max(1, Math.ceil(size / 2));
  }

  get(key) {
    let v = this.#young.get(key);
    if (v === undefined) {
      v = this.#old.get(key);
      if (v !== undefined) this.set(key, v);
    }
    return v;
  }

  set(key, v) {
    if (this.#young.size >= this.half) {
      this.#old = this.#young;
      this.#young = new Map();
    }
    this.#young.set(key, v);
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
