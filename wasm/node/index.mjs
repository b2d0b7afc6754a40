// dlroute for Node.js: the embedded rules decided by the decision module
// (wasm/decision/ABI.md) with their compiled plans, and the compiler module
// (wasm/ABI.md), with Node's WASI and its host functions, for the rules a
// caller hands it; the rule sets in plain objects. README.md beside this
// file shows how to use it; index.d.ts documents every export.

export { load, Engine, RuleSet, DEFAULT_MODULE, DEFAULT_DECISION_MODULE, DEFAULT_PLANS, DEFAULT_MEMO_SIZE } from "./engine.mjs";
export { packRules, DEFAULT_RULES } from "./rulesdir.mjs";
export { ABI_VERSION } from "./client.js";
export { DlrouteError, InputError, EvaluationError, LoadError, ModuleError, HostError, INPUT_CODES } from "./errors.js";
