// The rules archive (wasm/ABI.md, "The rules archive"): how a host hands a
// rules directory to the module. packRules writes the same bytes as Go's
// abi.PackFS for the same directory: every regular file, sorted by its
// slash-separated path, each as a u32 path length, the path, a u32 data
// length and the data, little-endian.

import { readdir, readFile, stat } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

import { DlrouteError, LoadError } from "./errors.mjs";

/** The rules the package loads when given none: the repository's rules/ directory. */
export const DEFAULT_RULES = new URL("../../rules/", import.meta.url);

const encoder = new TextEncoder();

/**
 * packRules reads a rules directory (holding <name>/<version>/ folders;
 * a path or a file: URL) into an archive. Symbolic links are skipped, as
 * Go's fs.WalkDir skips them. A directory that cannot be read is a
 * LoadError with one error of code read_error.
 */
export async function packRules(dir) {
  const root = dir instanceof URL ? fileURLToPath(dir) : String(dir);
  const files = [];
  try {
    const st = await stat(root);
    if (!st.isDirectory()) throw new Error(`${root} is not a directory`);
    await walk(root, "", files);
    files.sort((a, b) => Buffer.compare(a.path, b.path));
    for (const f of files) f.data = await readFile(join(root, f.name));
  } catch (err) {
    throw new LoadError([
      new DlrouteError(err.message, { code: "read_error", hint: "rules takes the directory that holds <name>/<version>/ folders", cause: err }),
    ]);
  }
  let size = 0;
  for (const f of files) size += 8 + f.path.length + f.data.length;
  const out = new Uint8Array(size);
  const view = new DataView(out.buffer);
  let at = 0;
  for (const f of files) {
    for (const part of [f.path, f.data]) {
      view.setUint32(at, part.length, true);
      out.set(part, at + 4);
      at += 4 + part.length;
    }
  }
  return out;
}

async function walk(root, rel, files) {
  for (const e of await readdir(join(root, rel), { withFileTypes: true })) {
    const name = rel ? `${rel}/${e.name}` : e.name;
    if (e.isDirectory()) await walk(root, name, files);
    else if (e.isFile()) files.push({ name, path: encoder.encode(name) });
  }
}
