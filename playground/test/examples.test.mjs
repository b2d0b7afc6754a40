// The examples (examples.js) against the rules this repository ships:
// each names a version that exists, and the one with an edit applies to
// its file as served.

import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import { test } from "node:test";

import { examples, applyTo, insertedLine } from "../examples.js";

const rules = new URL("../../rules/", import.meta.url);
const served = (path) => readFileSync(new URL(path, rules), "utf8");

test("every example names a version the shipped rules have, and ids are unique", () => {
  for (const ex of examples) assert.ok(existsSync(new URL(`${ex.ref.replace("@", "/")}/rules.yaml`, rules)), `${ex.id}: ${ex.ref}`);
  assert.equal(new Set(examples.map((e) => e.id)).size, examples.length);
  assert.equal(examples[0].id, "seed", "the page starts from the seed's case");
});

test("an example's edit goes after its line, once; the others edit nothing", () => {
  for (const ex of examples) {
    const { edits, note } = applyTo(ex, served);
    assert.equal(note, ex.note, ex.id);
    if (!ex.edit) {
      assert.equal(edits.size, 0, ex.id);
      continue;
    }
    const text = edits.get(ex.edit.file);
    assert.ok(text, `${ex.id}: ${ex.edit.file} edited`);
    assert.equal(text.split(ex.edit.insert).length, 2, `${ex.id}: inserted once`);
    assert.ok(text.includes(ex.edit.after + ex.edit.insert), `${ex.id}: right after its line`);
    assert.equal(text.length, served(ex.edit.file).length + ex.edit.insert.length);
    const line = insertedLine(ex, text);
    assert.equal(text.split("\n")[line - 1] + "\n", ex.edit.insert, `${ex.id}: insertedLine ${line}`);
  }
});

test("an edit already made, or whose line is missing, is not made", () => {
  const ex = examples.find((e) => e.edit);
  const edited = applyTo(ex, served).edits.get(ex.edit.file);
  assert.equal(applyTo(ex, () => edited).edits.size, 0);
  const missing = applyTo(ex, () => "rules: []\n");
  assert.equal(missing.edits.size, 0);
  assert.match(missing.note, /The line it adds after is not in jax\/v3\/rules\.yaml, so the edit was not made/);
  assert.equal(insertedLine(ex, "rules: []\n"), 0);
});
