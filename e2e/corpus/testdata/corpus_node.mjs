// corpus_node.mjs: the corpus test's Node.js host in one process. It
// loads the Node package once and answers every rule set's corpus as
// wasm/node/resolve.mjs answers its stdin (the same LineSplitter and
// answerLine, line by line), so only the module's start is paid once
// instead of once per rule-set version.
//
// stdin: one JSON object per line, {"ref": "jax@v3", "stdin": <base64>}.
// stdout: one JSON object per line, {"ref", "stdout", "status"}, status
// as resolve.mjs would exit: 0 every line decided, 1 otherwise.

import { createInterface } from "node:readline";

import { load } from "../../../wasm/node/index.mjs";
import { LineSplitter, answerLine } from "../../../wasm/node/lines.mjs";

const engine = await load({});
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
