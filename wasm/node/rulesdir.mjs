// A rules directory on disk, packed into the rules archive (archive.js)
// the module loads: the same bytes Go's abi.PackFS writes for the same
// directory, every regular file sorted by its slash-separated path, and
// for any directory but the package's own rules, the bytes of
// abi.PackText: without the parsed.bin at its root, which the module
// takes as the host's word (engine.Options.TrustParsed). Neither holds
// the plans.bin at the root: the module compiles rules and never reads it.

import { readdirSync, readFileSync, realpathSync, statSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

import { encodeArchive } from "./archive.js";
import { DlrouteError, LoadError } from "./errors.js";

/** The rules the package loads when given none: the repository's rules/ directory. */
export const DEFAULT_RULES = new URL("../../rules/", import.meta.url);

const encoder = new TextEncoder();

/**
 * packRules reads a rules directory (holding <name>/<version>/ folders;
 * a path or a file: URL) into an archive. Symbolic links are skipped, as
 * Go's fs.WalkDir skips them. The directory's parsed.bin goes with it
 * only when it is DEFAULT_RULES, the package's own: another directory's
 * could make a rule mean what its text does not say, so its expressions
 * are parsed from their text. A directory that cannot be read is a
 * LoadError with one error of code read_error.
 */
export async function packRules(dir) {
  return packRulesSync(dir);
}

/** packRulesSync is packRules on the calling thread, for a call that needs the rules before it returns. */
export function packRulesSync(dir) {
  const root = dir instanceof URL ? fileURLToPath(dir) : String(dir);
  let files = [];
  try {
    if (!statSync(root).isDirectory()) throw new Error(`${root} is not a directory`);
    walk(root, "", files);
    files = files.filter((f) => f.name !== "plans.bin");
    if (!isDefaultRules(root)) files = files.filter((f) => f.name !== "parsed.bin");
    files.sort((a, b) => Buffer.compare(a.path, b.path));
    for (const f of files) f.data = readFileSync(join(root, f.name));
  } catch (err) {
    throw new LoadError([
      new DlrouteError(err.message, { code: "read_error", hint: "rules takes the directory that holds <name>/<version>/ folders", cause: err }),
    ]);
  }
  return encodeArchive(files.map((f) => [f.name, f.data]));
}

/** isDefaultRules reports whether root is DEFAULT_RULES, by its real path. */
function isDefaultRules(root) {
  try {
    return realpathSync(root) === realpathSync(fileURLToPath(DEFAULT_RULES));
  } catch {
    return false;
  }
}

function walk(root, rel, files) {
  for (const e of readdirSync(join(root, rel), { withFileTypes: true })) {
    const name = rel ? `${rel}/${e.name}` : e.name;
    if (e.isDirectory()) walk(root, name, files);
    else if (e.isFile()) files.push({ name, path: encoder.encode(name) });
  }
}
