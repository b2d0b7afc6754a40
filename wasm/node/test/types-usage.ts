// Every export of index.d.ts used as a TypeScript project would use it.
// TestTypes (types_test.go) type-checks this file with tsc --strict, then
// compiles it and runs it against the module, so a declaration that tsc
// accepts and the package does not honour fails too: each check below
// throws when the value the package gives is not what the types say.

import {
  ABI_VERSION,
  DEFAULT_DECISION_MODULE,
  DEFAULT_MEMO_SIZE,
  DEFAULT_MODULE,
  DEFAULT_PLANS,
  DEFAULT_RULES,
  DlrouteError,
  Engine,
  EvaluationError,
  HostError,
  INPUT_CODES,
  InputError,
  LoadError,
  ModuleError,
  RuleSet,
  load,
  packRules,
} from "dlroute";
import type {
  Decision,
  DeviceDecision,
  DlrouteErrorOptions,
  ErrorEntry,
  ExceptionDecision,
  Explanation,
  Input,
  InputDecl,
  LoadOptions,
  Position,
  RuleStep,
  ValueStep,
} from "dlroute";

function check(ok: boolean, what: string): void {
  if (!ok) throw new Error(`types-usage: ${what}`);
}

/** caught runs f and returns what it threw. */
async function caught(f: () => unknown): Promise<unknown> {
  try {
    await f();
  } catch (err) {
    return err;
  }
  throw new Error("types-usage: nothing was thrown");
}

const abi: 1 = ABI_VERSION;
const memo: number = DEFAULT_MEMO_SIZE;
const moduleURL: URL = DEFAULT_MODULE;
const rulesURL: URL = DEFAULT_RULES;
const decisionURL: URL = DEFAULT_DECISION_MODULE;
const plansURL: URL = DEFAULT_PLANS;
const firstCode: "json_syntax" = INPUT_CODES[0];
check(abi === 1 && memo > 0 && moduleURL.protocol === "file:" && rulesURL.href.endsWith("/rules/") && firstCode === "json_syntax", "the constants");
check(decisionURL.href.endsWith("/decision.wasm") && plansURL.href === new URL("plans.bin", rulesURL).href, "the decision module's and the plans' defaults");

const options: LoadOptions = {
  rules: await packRules(DEFAULT_RULES),
  platformVersion: (device: number) => (device === 0 ? "cuda 12030" : undefined),
  copyToHost: (source: ArrayBuffer) => source.slice(0),
  memoSize: 16,
  wasiWarning: false,
};
const engine: Engine = await load(options);
check(engine.abiVersion === 1, "abiVersion");
await engine.load(rulesURL);

const jax: RuleSet = engine.ruleset("jax");
const inputs: InputDecl[] = jax.inputs;
const names: string[] = inputs.map((d) => `${d.name}: ${d.type}${d.required ? "" : ` = ${JSON.stringify(d.default)}`}${d.doc ?? ""}`);
check(jax.ref.startsWith("jax@") && names.length > 0 && jax.rules.includes("gpu"), "a rule set's description");
check(jax.deviceTypes.some((t: { name: string; code: number }) => t.name === "kDLCUDA" && t.code === 2), "deviceTypes");

const cuda: Input = { platform: "gpu", local_hardware_id: 0 }; // platform_version from the host
const decision: Decision = jax.resolve(cuda);
if ("error" in decision) {
  throw new Error(`types-usage: an exception: ${decision.error.type}`);
} else {
  const device: DeviceDecision = decision;
  check(device.device_type === "kDLCUDA" && device.device_type_code === 2 && device.device_id === 0 && device.rule === "gpu" && device.ruleset === jax.ref, "a device decision");
}
const unknown: Decision = jax.resolve({ ...cuda, platform_version: "<unknown>" });
check("error" in unknown && (unknown satisfies ExceptionDecision).error.type === "BufferError" && unknown.error.message.length > 0, "an exception decision");

const line: string = jax.resolveJSON('{"platform":"cpu","platform_version":"","local_hardware_id":0}');
check(JSON.parse(line).device_type === "kDLCPU" && jax.resolveJSON(new TextEncoder().encode(line.length > 0 ? '{"platform":"cpu","platform_version":""}' : "")).includes("kDLCPU"), "resolveJSON");

for (const entry of jax.resolveMany([cuda, { platform: 7 }])) {
  if ("input_error" in entry) {
    const e: ErrorEntry = entry.input_error;
    check(e.line === 2 && e.code === "wrong_type" && typeof e.message === "string" && (e.hint === undefined || typeof e.hint === "string"), "resolveMany's input_error");
  } else if ("eval_error" in entry) {
    const e: ErrorEntry = entry.eval_error;
    throw new Error(`types-usage: eval_error ${e.code}`);
  } else {
    check(entry.rule === "gpu", "resolveMany's decision");
  }
}

const how: Explanation = jax.explain(cuda);
const steps: RuleStep[] = how.trace.rules;
const values: ValueStep[] = how.trace.values;
const last: RuleStep | undefined = steps.at(-1);
const where: Position | undefined = last?.position;
check(last !== undefined && last.matched && last.rule === "gpu" && where !== undefined && where.file.endsWith("rules.yaml") && where.line > 0 && where.column > 0, "explain's rules");
check(values.some((v) => v.used && v.name.length > 0 && (v.position === undefined || v.position.line > 0) && v.error === undefined && v.import === undefined) && how.decision.rule === "gpu", "explain's values");

const exchange = engine.ruleset("exchange");
const source = new Uint8Array([1, 2, 3]).buffer;
const copied: { decision: Decision; buffer: ArrayBuffer | null; copied: boolean } = exchange.exchange({ ...cuda, platform_version: "<unknown>", max_version: [1, 1] }, source);
check(copied.copied && copied.buffer !== null && copied.buffer !== source && copied.buffer.byteLength === 3, "exchange with a copy");
check(exchange.exchange(cuda, source).buffer === source, "exchange in place");

const invalid = await caught(() => jax.resolve({ platform: "gpu", local_hardware_id: "zero" }));
check(invalid instanceof InputError && invalid instanceof DlrouteError && invalid.code === "wrong_type" && invalid.name === "InputError", "InputError");
const json: { code: string; message: string; position?: Position; source?: string; hint?: string } = (invalid as InputError).toJSON();
check(json.code === "wrong_type", "toJSON");

const notLoaded = await caught(() => engine.load("/nonexistent/rules"));
if (!(notLoaded instanceof LoadError)) throw new Error("types-usage: LoadError");
const first: DlrouteError | undefined = notLoaded.errors[0];
check(notLoaded.code === "load_error" && first?.code === "read_error" && first.position === undefined && first.source === undefined, "LoadError's errors");

const noModule = await caught(() => load({ module: new Uint8Array([1, 2, 3]), rules: rulesURL }));
check(noModule instanceof ModuleError && noModule.code === "module_error" && typeof noModule.hint === "string", "ModuleError");

const noCopier = await load({ copyToHost: null, platformVersion: null, memoSize: 0 });
const noCopy = await caught(() => noCopier.ruleset("exchange").exchange({ ...cuda, platform_version: "<unknown>", max_version: [1, 1] }, source));
check(noCopy instanceof HostError && noCopy.code === "no_copier", "HostError");

// The classes as a caller makes them, to hand on or to test with.
const init: DlrouteErrorOptions = { code: "mine", hint: "try again", position: { file: "rules/x/v1/rules.yaml", line: 1, column: 2 }, source: "rules: []", cause: notLoaded };
const made: DlrouteError[] = [new DlrouteError("m", init), new InputError("m", { code: "wrong_type" }), new EvaluationError("m", { code: "eval" }), new HostError("m", { code: "copy_failed" }), new ModuleError("m", { hint: "h" })];
check(new LoadError(made).errors.length === 5 && made[4].code === "module_error" && made[0].position?.column === 2, "the error classes");

console.log("types-usage: ok");
