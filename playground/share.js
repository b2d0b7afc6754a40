// The share link: the page's whole state (the rule set, the input, the
// full text of every edited file, the open file) in the URL's fragment,
// as #s=<base64url of deflate-raw of JSON>. The fragment never reaches a
// server. playground/RATIONALE.md says why full texts and why these limits.

export const STATE_VERSION = 1;

// LINK_WARN is where a link gets long for chat tools and issue trackers;
// the page says so but still makes it. LINK_MAX is where it stops making
// one (browsers take about 2 MB); READ_MAX bounds what a link may inflate
// to, so a crafted link cannot exhaust memory.
export const LINK_WARN = 8 << 10;
export const LINK_MAX = 1 << 20;
const READ_MAX = 8 << 20;

// encodeState returns the fragment ("s=...") for a state.
export async function encodeState(state) {
  const json = JSON.stringify({ v: STATE_VERSION, ...state });
  const packed = await pipe(new TextEncoder().encode(json), new CompressionStream("deflate-raw"), Infinity);
  return "s=" + base64url(packed);
}

// StateError is a link that cannot be read, with a message for a person.
export class StateError extends Error {}

// decodeState reads a fragment made by encodeState; null when the
// fragment holds no state. It throws StateError on anything malformed.
export async function decodeState(fragment) {
  const hash = fragment.replace(/^#/, "");
  if (hash === "") return null;
  if (!hash.startsWith("s=")) throw new StateError(`its fragment is not a playground state, which starts with #s=`);
  let packed;
  try {
    packed = unbase64url(hash.slice(2));
  } catch {
    throw new StateError("its state is not valid base64url; the link may have been cut short or changed");
  }
  let text;
  try {
    text = new TextDecoder("utf-8", { fatal: true }).decode(await pipe(packed, new DecompressionStream("deflate-raw"), READ_MAX));
  } catch (e) {
    if (e instanceof StateError) throw e;
    throw new StateError("its state does not decompress; the link may have been cut short or changed");
  }
  let state;
  try {
    state = JSON.parse(text);
  } catch {
    throw new StateError("its state is not valid JSON");
  }
  if (typeof state !== "object" || state === null || Array.isArray(state)) throw new StateError("its state is not a JSON object");
  if (state.v !== STATE_VERSION) throw new StateError(`its state is version ${JSON.stringify(state.v)}, and this page reads version ${STATE_VERSION}`);
  if (typeof state.ref !== "string") throw new StateError("its state names no rule set");
  if (typeof state.input !== "string") throw new StateError("its state has no input");
  const edits = state.edits ?? {};
  if (typeof edits !== "object" || Array.isArray(edits) || Object.values(edits).some((t) => typeof t !== "string")) {
    throw new StateError("its edits are not a map of file names to texts");
  }
  for (const path of Object.keys(edits)) {
    if (!/^[A-Za-z0-9_.-]+\/[A-Za-z0-9_.-]+\/[A-Za-z0-9_.-]+$/.test(path) || path.includes("..")) {
      throw new StateError(`it edits ${JSON.stringify(path)}, which is not a rules file (<name>/<version>/<file>)`);
    }
  }
  return { ref: state.ref, input: state.input, edits, file: typeof state.file === "string" ? state.file : undefined };
}

// pipe runs bytes through a (de)compression stream, refusing more than
// max bytes of output.
async function pipe(bytes, stream, max) {
  const writer = stream.writable.getWriter();
  writer.write(bytes).catch(() => {});
  writer.close().catch(() => {});
  const chunks = [];
  let n = 0;
  const reader = stream.readable.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    n += value.length;
    if (n > max) {
      reader.cancel().catch(() => {});
      throw new StateError(`its state inflates to more than ${max >> 20} MiB`);
    }
    chunks.push(value);
  }
  const out = new Uint8Array(n);
  let off = 0;
  for (const c of chunks) out.set(c, off), off += c.length;
  return out;
}

function base64url(bytes) {
  let bin = "";
  for (let i = 0; i < bytes.length; i += 0x8000) bin += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(bin).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

function unbase64url(s) {
  if (!/^[A-Za-z0-9_-]*$/.test(s)) throw new Error("bad base64url");
  const bin = atob(s.replace(/-/g, "+").replace(/_/g, "/"));
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out;
}

// tarball writes files (path -> text) as a POSIX ustar archive under
// prefix/, the download a person unpacks and hands to --rules.
export function tarball(prefix, files) {
  const enc = new TextEncoder();
  const blocks = [];
  const mtime = Math.floor(Date.now() / 1000);
  for (const [path, text] of [...files].sort(([a], [b]) => (a < b ? -1 : 1))) {
    const name = enc.encode(`${prefix}/${path}`);
    if (name.length > 100) throw new Error(`${prefix}/${path}: a name over 100 bytes does not fit a tar header`);
    const data = enc.encode(text);
    const h = new Uint8Array(512);
    h.set(name, 0);
    const field = (off, len, value) => h.set(enc.encode(value.padStart(len - 1, "0") + "\0"), off);
    field(100, 8, "644");
    field(108, 8, "0");
    field(116, 8, "0");
    field(124, 12, data.length.toString(8));
    field(136, 12, mtime.toString(8));
    h.fill(0x20, 148, 156); // the checksum counts its own field as spaces
    h[156] = 0x30; // '0': a regular file
    h.set(enc.encode("ustar\x0000"), 257);
    const sum = h.reduce((a, b) => a + b, 0);
    h.set(enc.encode(sum.toString(8).padStart(6, "0") + "\0 "), 148);
    blocks.push(h, data, new Uint8Array((512 - (data.length % 512)) % 512));
  }
  blocks.push(new Uint8Array(1024));
  const out = new Uint8Array(blocks.reduce((n, b) => n + b.length, 0));
  let off = 0;
  for (const b of blocks) out.set(b, off), off += b.length;
  return out;
}
