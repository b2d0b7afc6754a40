// The rules archive (wasm/ABI.md, "The rules archive"): how a JavaScript
// host hands rules to the module. The Node.js package packs a directory
// with it (rulesdir.mjs) and the browser playground the files being
// edited; Go's is internal/contract.PackFS.

const encoder = new TextEncoder();

/**
 * encodeArchive writes files, [path, data] pairs, into an archive, in the
 * order given: for each, a u32 length and the path's UTF-8 bytes
 * ("jax/v3/rules.yaml": relative, '/'-separated), then a u32 length and
 * the data (a string, written as UTF-8, or a Uint8Array), little-endian.
 * The module takes the files in any order; a host that wants equal
 * directories to give equal archives, as Go's abi.PackFS does, sorts them
 * first. Paths are not checked here: the module refuses a bad one with a
 * load_error naming it.
 */
export function encodeArchive(files) {
  const parts = [];
  let size = 0;
  for (const [path, data] of files) {
    const p = encoder.encode(path);
    const d = typeof data === "string" ? encoder.encode(data) : data;
    parts.push(p, d);
    size += 8 + p.length + d.length;
  }
  const out = new Uint8Array(size);
  const view = new DataView(out.buffer);
  let at = 0;
  for (const part of parts) {
    view.setUint32(at, part.length, true);
    out.set(part, at + 4);
    at += 4 + part.length;
  }
  return out;
}
