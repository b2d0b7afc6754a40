// corpus.mjs answers rule sets' corpora with the package's default engine,
// as resolve.mjs answers its stdin (the same LineSplitter and answerLine),
// in one process: e2e/node's TestPackageDecidesTheCorpus runs it with
// $DLROUTE_WASM naming no file, so every answer is the decision module's.
//
// stdin: one JSON object per line, {"ref": "jax@v3", "stdin": <base64>}.
// stdout: one JSON object per line, {"ref", "stdout", "status"}, status as
// resolve.mjs would exit: 0 every line decided, 1 otherwise.

import { createInterface } from "node:readline";

import { load } from "../index.mjs";
import { LineSplitter, answerLine } from "../lines.mjs";

const engine = await load();
for await (const text of createInterface({ input: process.stdin, crlfDelay: Infinity })) {
  if (!text) continue;
  const { ref, stdin } = JSON.parse(text);
  const ruleset = engine.ruleset(ref);
  const split = new LineSplitter();
  const out = [];
  let status = 0;
  let n = 0;
  const answer = (lines) => {
    for (const line of lines) {
      const { text, ok } = answerLine(ruleset, ++n, line);
      if (!ok) status = 1;
      out.push(text, "\n");
    }
  };
  answer(split.push(Buffer.from(stdin, "base64")));
  const last = split.end();
  if (last) answer([last]);
  process.stdout.write(JSON.stringify({ ref, stdout: out.join(""), status }) + "\n");
}
