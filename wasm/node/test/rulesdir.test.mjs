// packRules: the package's own rules go with their parsed.bin, any other
// directory without it (the module takes an archive's as the host's word).

import assert from "node:assert/strict";
import { rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { test } from "node:test";

import { DEFAULT_RULES, packRules } from "../index.mjs";
import { RULES, tempRules } from "./helpers.mjs";

// named: the archive holds a file at the root named parsed.bin (its u32
// length, then the name), not merely a file that mentions one.
const named = (archive) => Buffer.from(archive).includes(Buffer.concat([Buffer.from([10, 0, 0, 0]), Buffer.from("parsed.bin")]));

test("packRules packs the package's own rules with their parsed.bin", async () => {
  assert.ok(named(await packRules(DEFAULT_RULES)), "DEFAULT_RULES packed without parsed.bin");
  assert.ok(named(await packRules(RULES)), "the rules directory, by its path, packed without parsed.bin");
});

test("packRules leaves another directory's parsed.bin behind", async () => {
  const dir = await tempRules();
  try {
    await writeFile(join(dir, "parsed.bin"), "a hand-made parsed.bin");
    assert.ok(!named(await packRules(dir)), "a copy of the rules packed with its parsed.bin");
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
