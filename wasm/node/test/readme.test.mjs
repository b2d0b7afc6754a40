// README.md's ten-line example runs as written, installed as a project
// that depends on the package would have it, and prints what the README says.

import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdir, mkdtemp, readFile, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { test } from "node:test";

const PACKAGE = fileURLToPath(new URL("..", import.meta.url));

test("README.md's example", async () => {
  const readme = await readFile(join(PACKAGE, "README.md"), "utf8");
  const section = readme.slice(readme.indexOf("## Ten lines"));
  const example = section.match(/```js\n([\s\S]*?)```/)[1];
  const output = section.match(/```text\n([\s\S]*?)```/)[1];
  assert.ok(example.split("\n").filter((l) => l.trim()).length <= 10, "the example is ten lines");

  // A project with the package in node_modules, as `npm install DIR` links it:
  // the example's process finds the checked-in decision module through the
  // link (or inherits $DLROUTE_DECISION_WASM).
  const project = await mkdtemp(join(tmpdir(), "dlroute-example-"));
  try {
    await mkdir(join(project, "node_modules"));
    await symlink(PACKAGE, join(project, "node_modules", "dlroute"), "dir");
    await writeFile(join(project, "example.mjs"), example);
    const r = spawnSync(process.execPath, ["example.mjs"], { cwd: project, encoding: "utf8" });
    assert.equal(r.stderr, "");
    assert.equal(r.stdout, output);
    assert.equal(r.status, 0);
  } finally {
    await rm(project, { recursive: true, force: true });
  }
});
