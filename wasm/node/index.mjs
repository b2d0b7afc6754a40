// dlroute for Node.js: the dlroute WebAssembly module (wasm/ABI.md) with
// Node's WASI, its host functions, and the rule sets in plain objects.
// README.md beside this file shows how to use it; index.d.ts documents
// every export.

export { load, Engine, RuleSet, DEFAULT_MODULE, DEFAULT_MEMO_SIZE } from "./engine.mjs";
export { packRules, DEFAULT_RULES } from "./rulesdir.mjs";
export { ABI_VERSION } from "./client.js";
export { DlrouteError, InputError, EvaluationError, LoadError, ModuleError, HostError, INPUT_CODES } from "./errors.js";
