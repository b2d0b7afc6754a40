// The share link's encoding (share.js) and the download's tar archive.

import assert from "node:assert/strict";
import { test } from "node:test";

import { encodeState, decodeState, StateError, tarball, STATE_VERSION } from "../share.js";

const state = { ref: "jax@v3", input: '{"platform":"gpu","platform_version":"é ⏎\\n"}', edits: { "jax/v3/rules.yaml": "rules: []\n# é\n" }, file: "jax/v3/rules.yaml" };

// fragment packs any JSON text as a link would.
async function fragment(json) {
  const stream = new Blob([json]).stream().pipeThrough(new CompressionStream("deflate-raw"));
  const bytes = new Uint8Array(await new Response(stream).arrayBuffer());
  return "#s=" + Buffer.from(bytes).toString("base64url");
}

test("a state round-trips through its fragment", async () => {
  const frag = await encodeState(state);
  assert.match(frag, /^s=[A-Za-z0-9_-]+$/);
  assert.deepEqual(await decodeState("#" + frag), state);
  assert.deepEqual(await decodeState(frag), state, "the # is optional");
});

test("no fragment is no state", async () => {
  assert.equal(await decodeState(""), null);
  assert.equal(await decodeState("#"), null);
});

test("a state without a file opens none", async () => {
  const { file, ...rest } = state;
  assert.equal((await decodeState("#" + await encodeState(rest))).file, undefined);
});

test("a fragment that does not read is a StateError saying why", async () => {
  const good = { v: STATE_VERSION, ref: "jax@v3", input: "{}" };
  const cases = [
    ["#x=1", /not a playground state/],
    ["#s=not-a-state!", /not valid base64url/],
    ["#s=AAAA", /does not decompress/],
    [(await encodeState(state)).slice(0, 20), /does not decompress/],
    [await fragment("{not json"), /not valid JSON/],
    [await fragment("[1]"), /not a JSON object/],
    [await fragment(JSON.stringify({ ...good, v: 2 })), /version 2, and this page reads version 1/],
    [await fragment(JSON.stringify({ ...good, ref: undefined })), /names no rule set/],
    [await fragment(JSON.stringify({ ...good, input: 1 })), /has no input/],
    [await fragment(JSON.stringify({ ...good, edits: { "jax/v3/rules.yaml": 1 } })), /not a map of file names/],
    [await fragment(JSON.stringify({ ...good, edits: ["a"] })), /not a map of file names/],
    [await fragment(JSON.stringify({ ...good, edits: { "../../etc/passwd": "" } })), /not a rules file/],
    [await fragment(JSON.stringify({ ...good, edits: { "jax/../rules.yaml": "" } })), /not a rules file/],
    [await fragment(JSON.stringify({ ...good, edits: { "jax/v3/sub/rules.yaml": "" } })), /not a rules file/],
  ];
  for (const [frag, want] of cases) {
    await assert.rejects(decodeState(frag), (e) => e instanceof StateError && want.test(e.message), `decodeState(${frag.slice(0, 40)})`);
  }
});

test("a link that inflates past 8 MiB is refused, not inflated", async () => {
  const bomb = await fragment(JSON.stringify({ v: 1, ref: "jax@v3", input: "x".repeat(9 << 20) }));
  assert.ok(bomb.length < 64 << 10, `the bomb is ${bomb.length} bytes`);
  await assert.rejects(decodeState(bomb), (e) => e instanceof StateError && /inflates to more than 8 MiB/.test(e.message));
});

// untar reads a ustar archive: each entry's name, mode, size, type and
// body, checking each header's checksum.
function untar(bytes) {
  const text = (b) => new TextDecoder().decode(b).replace(/\0.*$/s, "");
  const entries = [];
  for (let off = 0; off + 512 <= bytes.length;) {
    const h = bytes.subarray(off, off + 512);
    if (h.every((b) => b === 0)) break;
    const stored = parseInt(text(h.subarray(148, 156)), 8);
    const sum = h.reduce((a, b, i) => a + (i >= 148 && i < 156 ? 0x20 : b), 0);
    assert.equal(stored, sum, `${text(h.subarray(0, 100))}: header checksum`);
    assert.equal(text(h.subarray(257, 263)), "ustar");
    const size = parseInt(text(h.subarray(124, 136)), 8);
    entries.push({ name: text(h.subarray(0, 100)), mode: text(h.subarray(100, 108)), type: String.fromCharCode(h[156]), body: new TextDecoder().decode(bytes.subarray(off + 512, off + 512 + size)) });
    off += 512 + Math.ceil(size / 512) * 512;
  }
  return entries;
}

test("tarball: a ustar archive of the files under the prefix, sorted, ending in two zero blocks", () => {
  const files = new Map([["jax/v3/tests.yaml", "cases: []\n"], ["jax/v3/rules.yaml", "é".repeat(300)], ["jax/v0/manifest.yaml", ""]]);
  const tar = tarball("rules", files);
  assert.equal(tar.length % 512, 0);
  assert.ok(tar.subarray(tar.length - 1024).every((b) => b === 0));
  assert.deepEqual(untar(tar), [
    { name: "rules/jax/v0/manifest.yaml", mode: "0000644", type: "0", body: "" },
    { name: "rules/jax/v3/rules.yaml", mode: "0000644", type: "0", body: "é".repeat(300) },
    { name: "rules/jax/v3/tests.yaml", mode: "0000644", type: "0", body: "cases: []\n" },
  ]);
});

test("tarball refuses a name over 100 bytes, which a ustar header cannot hold", () => {
  assert.throws(() => tarball("rules", new Map([[`jax/v3/${"x".repeat(100)}.yaml`, ""]])), /over 100 bytes/);
});
