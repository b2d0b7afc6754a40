// resolve.mjs as a script runs it. The corpus (cmd/dlroute/corpus_test.go)
// compares its output with `dlroute resolve --json` on every input; these
// are what the corpus does not see: flags, failures, and answering a line
// while stdin stays open.

import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import { rm } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { after, before, test } from "node:test";

import { FEW, tempRules } from "./helpers.mjs";

const SCRIPT = fileURLToPath(new URL("../resolve.mjs", import.meta.url));
const cuda = '{"platform":"gpu","platform_version":"cuda 12030","local_hardware_id":0}';
const cudaDecision = '{"device_type":"kDLCUDA","device_type_code":2,"device_id":0,"rule":"gpu","ruleset":"jax@v3"}';

const resolve = (args, input = "") => spawnSync(process.execPath, [SCRIPT, ...args], { input, encoding: "utf8" });

test("--help: the usage on stdout, status 0", () => {
  const r = resolve(["--help"]);
  assert.equal(r.status, 0);
  assert.match(r.stdout, /^Usage: node resolve\.mjs \[--ruleset NAME\[@VERSION\]\] \[--rules DIR\]/);
  assert.equal(r.stderr, "");
});

test("a flag it does not know: an error and a hint, status 2", () => {
  const r = resolve(["--platform", "gpu"]);
  assert.equal(r.status, 2);
  assert.equal(r.stdout, "");
  assert.match(r.stderr, /^error: Unknown option '--platform'.*\nhint: see 'node resolve\.mjs --help'\n$/s);
});

test("--json is accepted, and a rule set by ref", () => {
  const r = resolve(["--json", "--ruleset", "jax@v2"], `${cuda}\n`);
  assert.equal(r.stdout, cudaDecision.replace("jax@v3", "jax@v2") + "\n");
  assert.equal(r.status, 0);
  assert.equal(r.stderr, "", "nothing on stderr, the WASI warning included");
});

test("a rule set that does not exist: status 1, the error and its hint", () => {
  const r = resolve(["--ruleset", "jax@v9"], `${cuda}\n`);
  assert.equal(r.status, 1);
  assert.equal(r.stdout, "");
  assert.equal(r.stderr, 'error: rule set jax has no version "v9"\nhint: versions: v0, v1, v1.1, v1.2, v2, v3\n');
});

let broken;
before(async () => {
  broken = await tempRules({ "jax/v3/rules.yaml": (s) => s.replace("when: shards != 1", "when: shards >> 1") }, FEW);
});
after(() => rm(broken, { recursive: true, force: true }));

test("--rules DIR that does not compile: status 1, each error as the Go command prints it", () => {
  const r = resolve(["--rules", `${broken}/`], `${cuda}\n`);
  assert.equal(r.status, 1);
  assert.equal(r.stdout, "");
  const lines = r.stderr.split("\n");
  assert.match(lines[0], new RegExp(`^error: ${broken}/jax/v3/rules\\.yaml:52:19: rule sharded: when: Syntax error: `));
  assert.deepEqual(lines.slice(1, 3), [" |     when: shards >> 1", " | ..................^"]);
  // One typo is one error: the versions that import jax@v3 add none of their own.
  assert.equal(lines.filter((l) => l.startsWith("error:")).length, 1, r.stderr);
  assert.ok(!r.stderr.includes("does not load"), r.stderr);
});

test("each line is answered while stdin stays open", async () => {
  const child = spawn(process.execPath, [SCRIPT], { stdio: ["pipe", "pipe", "inherit"] });
  child.stdout.setEncoding("utf8");
  let buffered = "";
  const nextLine = () =>
    new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error("no answer in 60 s while stdin stays open")), 60_000);
      const check = () => {
        const i = buffered.indexOf("\n");
        if (i < 0) return;
        clearTimeout(timer);
        child.stdout.off("data", onData);
        const line = buffered.slice(0, i);
        buffered = buffered.slice(i + 1);
        resolve(line);
      };
      const onData = (d) => {
        buffered += d;
        check();
      };
      child.stdout.on("data", onData);
      check();
    });
  for (const [input, want] of [
    [cuda, cudaDecision],
    ["{", '{"input_error":{"line":2,"code":"json_syntax","message":"unexpected EOF"}}'],
    ['{"platform":"cpu","platform_version":"cpu"}', '{"device_type":"kDLCPU","device_type_code":1,"device_id":0,"rule":"cpu","ruleset":"jax@v3"}'],
  ]) {
    child.stdin.write(`${input}\n`);
    assert.equal(await nextLine(), want);
  }
  child.stdin.end();
  const status = await new Promise((resolve) => child.on("exit", resolve));
  assert.equal(status, 1, "a bad line makes the status 1");
});
