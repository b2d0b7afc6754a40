// What the tests share: the module under test, compiled once per test
// process, and modules and rules made to fail.

import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
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
 * The decision module under test: $DLROUTE_DECISION_WASM, as the Go test
 * that runs these sets it. Where it is unset, this process builds one from
 * the checkout with go (a second or two with Go's build cache), so that
 * the package's default engine, which decides with it, is tested too.
 */
export const DECISION_PATH = (process.env.DLROUTE_DECISION_WASM ||= buildDecisionModule());

function buildDecisionModule() {
  const dir = mkdtempSync(join(tmpdir(), "dlroute-decision-"));
  process.on("exit", () => rmSync(dir, { recursive: true, force: true }));
  const out = join(dir, "decision.wasm");
  execFileSync("go", ["build", "-trimpath", "-buildmode=c-shared", "-o", out, "./wasm/decision"], {
    cwd: fileURLToPath(new URL("../../..", import.meta.url)),
    env: { ...process.env, GOOS: "wasip1", GOARCH: "wasm", CGO_ENABLED: "0" },
    stdio: ["ignore", "ignore", "inherit"],
  });
  return out;
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
 * tempRules copies the rules to a temporary directory and applies edit, a
 * map from a file (relative to the rules) to a function of its text.
 */
export async function tempRules(edit = {}) {
  const dir = await mkdtemp(join(tmpdir(), "dlroute-rules-"));
  await cp(RULES, dir, { recursive: true });
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
 * Hand-assembled, as Go's wasmhost test assembles its own.
 */
export function fakeModule(version, exports, traps = []) {
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
  const names = [["memory", 2, 0], ["_initialize", 0, 1], ...exports.map((n) => [n, 0, traps.includes(n) ? 2 : 0])];
  const exportSection = [...leb(names.length)];
  for (const [name, kind, index] of names) {
    const bytes = new TextEncoder().encode(name);
    exportSection.push(...leb(bytes.length), ...bytes, kind, index);
  }
  return new Uint8Array([
    0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00,
    ...section(1, [2, 0x60, 0, 1, 0x7f, 0x60, 0, 0]), // types: () -> i32, () -> ()
    ...section(3, [3, 0, 1, 1]), // functions: the version, a no-op _initialize, a trap
    ...section(5, [1, 0, 64]), // one memory of 64 pages (4 MiB): room for the rules, and for them to grow
    ...section(7, exportSection),
    ...section(10, [3, 4, 0, 0x41, version, 0x0b, 2, 0, 0x0b, 3, 0, 0x00, 0x0b]), // i32.const version; nothing; unreachable
  ]);
}
