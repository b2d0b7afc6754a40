// What the tests share: the module under test, compiled once per test
// process, and modules and rules made to fail.

import { cp, mkdtemp, readFile, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

/** The module under test: $DLROUTE_WASM, as `go test ./wasm/node` sets it. */
export const MODULE_PATH = process.env.DLROUTE_WASM;
if (!MODULE_PATH) {
  throw new Error("$DLROUTE_WASM is unset: run these tests with go -C e2e test ./node, which builds the module and sets it, or build it (README.md) and set it");
}

/**
 * The decision module under test: $DLROUTE_DECISION_WASM where it is set
 * (another build), else the checked-in wasm/decision/decision.wasm, which
 * the package's default engine decides with.
 */
export const DECISION_PATH = process.env.DLROUTE_DECISION_WASM || checkedInDecisionModule();

/** checkedInDecisionModule is the path of wasm/decision/decision.wasm, the package's default. */
export function checkedInDecisionModule() {
  return fileURLToPath(new URL("../../decision/decision.wasm", import.meta.url));
}

let compiled;
/** compiledModule is the module under test, compiled once per process. */
export async function compiledModule() {
  compiled ??= WebAssembly.compile(await readFile(MODULE_PATH));
  return compiled;
}

/** The repository's rules directory, the package's default. */
export const RULES = fileURLToPath(new URL("../../../rules/", import.meta.url));

/** The ABI golden file that wasmhost's TestABISurface also checks. */
export const ABI_GOLDEN = new URL("../../testdata/abi-v1.golden", import.meta.url);

/**
 * The rule sets a test that loads rules as text copies when any will do:
 * jax, and exchange, which imports it. The compiler module compiles every
 * version it is handed, and these are a fifth of the shipped rules.
 */
export const FEW = ["jax", "exchange"];

/**
 * tempRules copies the rules to a temporary directory and applies edit, a
 * map from a file (relative to the rules) to a function of its text. With
 * only, a list of rule-set names, it copies just those sets.
 */
export async function tempRules(edit = {}, only = undefined) {
  const dir = await mkdtemp(join(tmpdir(), "dlroute-rules-"));
  if (only) {
    for (const set of only) await cp(join(RULES, set), join(dir, set), { recursive: true });
  } else {
    await cp(RULES, dir, { recursive: true });
  }
  for (const [file, f] of Object.entries(edit)) {
    const path = join(dir, file);
    await writeFile(path, f(await readFile(path, "utf8")));
  }
  return dir;
}

/**
 * fakeModule is a WebAssembly module with a memory, an _initialize that
 * does nothing, and the given exports, each a function that returns
 * version (an i32), or traps when it is named in traps: what a dlroute
 * module of another ABI version, or a broken one, looks like to a host.
 * imports, pairs of a module and a name, are functions of no arguments it
 * imports, as an older decision module imported WASI's. Hand-assembled, as
 * Go's wasmhost test assembles its own.
 */
export function fakeModule(version, exports, traps = [], imports = []) {
  const leb = (n) => {
    const out = [];
    do {
      let b = n & 0x7f;
      n >>>= 7;
      if (n) b |= 0x80;
      out.push(b);
    } while (n);
    return out;
  };
  const section = (id, content) => [id, ...leb(content.length), ...content];
  const bytes = (s) => {
    const b = new TextEncoder().encode(s);
    return [...leb(b.length), ...b];
  };
  const importSection = [...leb(imports.length), ...imports.flatMap(([m, n]) => [...bytes(m), ...bytes(n), 0, 1])];
  const fn = (i) => i + imports.length; // imported functions come first
  const names = [["memory", 2, 0], ["_initialize", 0, fn(1)], ...exports.map((n) => [n, 0, fn(traps.includes(n) ? 2 : 0)])];
  const exportSection = [...leb(names.length)];
  for (const [name, kind, index] of names) exportSection.push(...bytes(name), kind, index);
  return new Uint8Array([
    0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00,
    ...section(1, [2, 0x60, 0, 1, 0x7f, 0x60, 0, 0]), // types: () -> i32, () -> ()
    ...(imports.length ? section(2, importSection) : []),
    ...section(3, [3, 0, 1, 1]), // functions: the version, a no-op _initialize, a trap
    ...section(5, [1, 0, 64]), // one memory of 64 pages (4 MiB): room for the rules, and for them to grow
    ...section(7, exportSection),
    ...section(10, [3, 4, 0, 0x41, version, 0x0b, 2, 0, 0x0b, 3, 0, 0x00, 0x0b]), // i32.const version; nothing; unreachable
  ]);
}
