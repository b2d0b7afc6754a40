// One instance of a dlroute module in Node.js: node:wasi, and the ABI
// client that makes every call by its ABI.md's conventions. The compiler
// module (wasm/ABI.md) gets WASI, the host functions (host.mjs) and
// client.js; the decision module (wasm/decision/ABI.md) imports only its
// two host functions, so node:wasi is not loaded for it, and gets
// decision.js with noMachineImports. Both clients
// are shared with the browser playground.

import { createRequire } from "node:module";

import { BUILD, Client, HOST_MODULE, checkModule } from "./client.js";
import { DECISION_BUILD, DECISION_HOST_MODULE, DECISION_IMPORTS, DecisionClient, checkDecisionModule, noMachineImports } from "./decision.js";
import { ModuleError } from "./errors.js";
import { hostImports } from "./host.mjs";

// node:wasi is required, not imported, so that loading it is synchronous
// and its warning can be told apart (newWASI).
const require = createRequire(import.meta.url);

/** The exports of ABI version 1 that this host calls. */
export const CALLED_EXPORTS = Object.freeze(["dlroute_alloc", "dlroute_free", "dlroute_load", "dlroute_load_lazy", "dlroute_ruleset", "dlroute_describe", "dlroute_resolve_json", "dlroute_explain_json", "dlroute_exchange"]);

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

/**
 * startInstance starts module (a WebAssembly.Module) with host (see
 * hostImports) and returns its Client, which has checked that it is a
 * dlroute module of ABI_VERSION with every export this host calls. It
 * throws a ModuleError otherwise.
 */
export function startInstance(module, host) {
  checkModule(module);
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
  return new Client(instance.exports, CALLED_EXPORTS);
}

/**
 * startDecisionInstance starts the decision module (a WebAssembly.Module)
 * with its two host functions answering as a host that reads no machine
 * and copies nothing (noMachineImports), runs its _initialize and returns
 * its DecisionClient, which has checked its ABI version. It throws a
 * ModuleError for a module that is not the decision module, or that
 * imports anything else: an older build (Go's, which imported WASI) is
 * refused with a hint that says where the checked-in one is.
 */
export function startDecisionInstance(module) {
  checkDecisionModule(module);
  const imports = WebAssembly.Module.imports(module).filter((i) => i.module !== DECISION_HOST_MODULE || !DECISION_IMPORTS.includes(i.name));
  if (imports.length) {
    const first = `${imports[0].module}.${imports[0].name}`;
    const more = imports.length > 1 ? ` and ${imports.length - 1} more` : "";
    const only = DECISION_IMPORTS.map((n) => `${DECISION_HOST_MODULE}.${n}`).join(" and ");
    throw new ModuleError(`the decision module imports ${first}${more}: it is an older build, and the decision module imports only ${only}`, { hint: DECISION_BUILD });
  }
  let instance;
  try {
    instance = new WebAssembly.Instance(module, noMachineImports());
    instance.exports._initialize();
  } catch (err) {
    throw new ModuleError(`starting the decision module: ${err.message}`, { cause: err, hint: DECISION_BUILD });
  }
  return new DecisionClient(instance.exports);
}
