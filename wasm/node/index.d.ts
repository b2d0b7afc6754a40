// Type declarations of the dlroute package for Node.js (index.mjs).

declare global {
  // A compiled module, as lib.dom declares it; this empty interface merges
  // with that declaration where a project has it, and stands in where not.
  namespace WebAssembly {
    interface Module {}
  }
}

/** The ABI version of the compiler module this package speaks (wasm/ABI.md). */
export const ABI_VERSION: 1;

/** The compiler module the package reads when given none and $DLROUTE_WASM is unset: dlroute.wasm beside the package. */
export const DEFAULT_MODULE: URL;

/**
 * The decision module (wasm/decision/ABI.md) the default rules are decided
 * with when $DLROUTE_DECISION_WASM is unset: decision.wasm beside the package.
 */
export const DEFAULT_DECISION_MODULE: URL;

/** The default rules' plans, compiled by the Go engine: rules/plans.bin (`go generate ./rules`). */
export const DEFAULT_PLANS: URL;

/** The rules load() packs when given none: the repository's rules/ directory. */
export const DEFAULT_RULES: URL;

/** How many decisions a rule set remembers when LoadOptions.memoSize is not given. */
export const DEFAULT_MEMO_SIZE: number;

/** The codes of an input that is not valid. */
export const INPUT_CODES: readonly ["json_syntax", "unknown_field", "missing_field", "wrong_type", "too_long", "invalid_utf8"];

export interface LoadOptions {
  /**
   * The compiler module: a path, a file: URL, its bytes, or a compiled
   * WebAssembly.Module (to start several engines from one compile).
   * Default: $DLROUTE_WASM, else DEFAULT_MODULE. With the default rules it
   * is read only by the first call that needs it (see load).
   */
  module?: string | URL | ArrayBuffer | ArrayBufferView | WebAssembly.Module;
  /**
   * The rules: a directory holding <name>/<version>/ folders (a path or a
   * file: URL), packed by packRules, or an archive it made. Default:
   * DEFAULT_RULES.
   */
  rules?: string | URL | Uint8Array;
  /**
   * What platform_version is for an input that leaves it out: a fixed
   * string, or a function of the device (the input's local_hardware_id,
   * 0 when it is null) that returns it. It runs inside a call into the
   * module, so it must be synchronous. undefined or null (the default, or
   * as a return value) means this host cannot tell: the input is then checked
   * as it is and gets missing_field, as natively. A function that throws,
   * or returns something other than a string, makes the call a HostError.
   */
  platformVersion?: string | ((device: number) => string | undefined | null) | null;
  /**
   * Copies an array's bytes into host memory for exchange: returns a new
   * ArrayBuffer; an exception is a failed copy (HostError copy_failed,
   * with it as the cause). Default: source.slice(0). null: this host has
   * no copier (HostError no_copier where a decision copies).
   */
  copyToHost?: ((source: ArrayBuffer) => ArrayBuffer) | null;
  /**
   * About how many decisions each rule set remembers, by input line; 0 turns
   * the memo off. Default: DEFAULT_MEMO_SIZE. A remembered input is not
   * asked of platformVersion again.
   */
  memoSize?: number;
  /** Print Node's ExperimentalWarning for WASI, which the package otherwise keeps quiet (README.md). Default: false. */
  wasiWarning?: boolean;
}

/**
 * load starts the engine. With the default rules it starts the decision
 * module ($DLROUTE_DECISION_WASM, else DEFAULT_DECISION_MODULE) with their
 * plans (DEFAULT_PLANS), and reads no compiler module: resolve,
 * resolveJSON, resolveMany and explain decide with the plans. The
 * compiler module is read and compiled, on the calling thread, by the
 * first call that needs what plans lack: exchange, a rule set's inputs,
 * rules or deviceTypes, and ruleset() of a release ("jax==0.10.2"). Rules given in
 * LoadOptions.rules are compiled whole by the compiler module here, so
 * that every error in them is the LoadError. It rejects with a
 * ModuleError for a module it reads that is missing, not WebAssembly, not
 * dlroute's or of another ABI version (a call that reads the compiler
 * module later throws it then), and with a LoadError for rules that do
 * not load.
 */
export function load(options?: LoadOptions): Promise<Engine>;

/** packRules reads a rules directory into the archive the module loads (wasm/ABI.md), the bytes Go's abi.PackFS writes; a directory other than DEFAULT_RULES goes without its parsed.bin (abi.PackText). */
export function packRules(dir: string | URL): Promise<Uint8Array>;

/** Engine is the module, started, with its rules. Calls are synchronous; one engine serves one thread. */
export class Engine {
  private constructor();
  /** The module's ABI version. */
  readonly abiVersion: 1;
  /**
   * load replaces the rules with rules the compiler module compiles (read
   * now if it was not). It rejects with a LoadError when they do not
   * load, and the rules in service stay. Rule sets got before throw
   * no_ruleset afterwards: get them again.
   */
  load(rules: string | URL | Uint8Array): Promise<void>;
  /**
   * ruleset returns "jax" (its newest version), "jax@v2", "jax==0.10.2", ...; default "jax".
   * Throws a DlrouteError with code no_ruleset (or unchecked_release for a
   * release no version was checked against); with the default rules, a
   * ModuleError for a plan the decision module refuses.
   */
  ruleset(ref?: string): RuleSet;
}

/** An input: the rule set's declared inputs by name, as in a line of `dlroute resolve --json`. */
export type Input = Record<string, unknown>;

/** A decision, as `dlroute resolve --json` writes it: a device or an exception. */
export type Decision = DeviceDecision | ExceptionDecision;

export interface DeviceDecision {
  device_type: string;
  device_type_code: number;
  device_id: number;
  /** Set by exchange rule sets only. */
  copy?: boolean;
  capsule?: "dltensor" | "dltensor_versioned";
  flags?: string[];
  rule: string;
  ruleset: string;
}

export interface ExceptionDecision {
  /** The exception the library would raise, such as BufferError: an answer, not a failure. */
  error: { type: string; message: string };
  rule: string;
  ruleset: string;
}

/** What resolveMany and resolve.mjs say of an input they could not decide. */
export interface ErrorEntry {
  line: number;
  code: string;
  message: string;
  position?: Position;
  hint?: string;
}

export interface Position {
  file: string;
  line: number;
  column: number;
}

/** A decision and how it was made, as `dlroute resolve --explain` writes it. */
export interface Explanation {
  decision: Decision;
  trace: {
    /** The rules tried, in order; the last one matched and decided (or failed). */
    rules: RuleStep[];
    /** Every named value of the rule set, in file order, with what it evaluated to. */
    values: ValueStep[];
  };
}

/** One rule tried: whether its condition held. */
export interface RuleStep {
  rule: string;
  matched: boolean;
  /** Its condition failed to evaluate. */
  error?: string;
  position: Position;
}

/** One named value: what it evaluated to (a JSON value), or the error it failed with. */
export interface ValueStep {
  name: string;
  value: unknown;
  error?: string;
  /** Whether the decision read it; the others are computed for the explanation only. */
  used: boolean;
  position?: Position;
  /** An import's value is its decision, and this explains it. */
  import?: Explanation;
}

export interface InputDecl {
  name: string;
  type: string;
  required: boolean;
  default?: unknown;
  doc?: string;
}

/** RuleSet is one version of a rule set in the engine. */
export class RuleSet {
  private constructor();
  /** "name@version". */
  readonly ref: string;
  /** The declared inputs. This, rules and deviceTypes come from the compiler module (see load), once. */
  readonly inputs: InputDecl[];
  /** The rule ids, in order. */
  readonly rules: string[];
  readonly deviceTypes: { name: string; code: number }[];
  /**
   * resolve decides one input. A number must be finite; a bigint keeps
   * every digit; a field set to undefined is left out. Throws InputError,
   * EvaluationError, HostError, or ModuleError (the module trapped: the
   * next call starts a fresh instance).
   */
  resolve(input: Input): Decision;
  /** resolveJSON decides one JSON line (text or bytes): the decision's JSON, byte for byte what `dlroute resolve --json` writes. */
  resolveJSON(line: string | Uint8Array): string;
  /** resolveMany decides each input; an input it cannot decide is an entry, never an exception. Lines count from 1. */
  resolveMany(inputs: Iterable<Input>): Array<Decision | { input_error: ErrorEntry } | { eval_error: ErrorEntry }>;
  /** explain decides one input and says how: the rules tried, and every value. */
  explain(input: Input): Explanation;
  /**
   * exchange decides one input of an exchange rule set and carries it
   * out for source, the array's bytes: buffer is source itself (an export
   * in place), a copy made by copyToHost (copied), or null (an exception).
   * Throws HostError copy_failed or no_copier for a copy not made. It
   * needs the compiler module (see load), which holds the copier.
   */
  exchange(input: Input, source: ArrayBuffer): { decision: Decision; buffer: ArrayBuffer | null; copied: boolean };
}

/** What a DlrouteError is made with. */
export interface DlrouteErrorOptions {
  code?: string;
  hint?: string;
  position?: Position;
  source?: string;
  cause?: unknown;
}

/** The base of every error the package throws. code is stable; never match on the message. */
export class DlrouteError extends Error {
  constructor(message: string, options?: DlrouteErrorOptions);
  code: string;
  hint?: string;
  /** Where in the rules, for an error in a rule file. */
  position?: Position;
  /** The rule file's line at position. */
  source?: string;
  toJSON(): { code: string; message: string; position?: Position; source?: string; hint?: string };
}
/** The input is not valid: code is one of INPUT_CODES. */
export class InputError extends DlrouteError {}
/** The rules could not decide a valid input. */
export class EvaluationError extends DlrouteError {}
/** The rules did not load: code "load_error", every error in errors. */
export class LoadError extends DlrouteError {
  /** The message names the first error and how many more there are. */
  constructor(errors: DlrouteError[]);
  errors: DlrouteError[];
}
/** The module is missing, not dlroute's, of another ABI version, or trapped: code "module_error". */
export class ModuleError extends DlrouteError {
  constructor(message: string, options?: { hint?: string; cause?: unknown });
}
/** A host function failed: the platform version could not be read, or a copy failed (copy_failed) or has no copier (no_copier). */
export class HostError extends DlrouteError {}
