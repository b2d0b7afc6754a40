#!/usr/bin/env node
// resolve.mjs: `dlroute resolve --json` for scripts, in Node.js. It reads
// the same JSON Lines on stdin and writes the same output lines, byte for
// byte: a decision, {"input_error":{...}} or {"eval_error":{...}} per line,
// each answered as soon as no more input is waiting. Exit status: 0 every
// line decided, 1 a line not decided or the rules or module not loaded, 2
// a usage error.
//
//	node wasm/node/resolve.mjs [--ruleset NAME[@VERSION]] [--rules DIR] < inputs.jsonl

import { parseArgs } from "node:util";

import { DlrouteError, LoadError, load } from "./index.mjs";
import { formatError } from "./errors.js";
import { LineSplitter, answerLine } from "./lines.mjs";

const USAGE = `Usage: node resolve.mjs [--ruleset NAME[@VERSION]] [--rules DIR] < inputs.jsonl

Decide the DLPack device of each JSON input line on stdin, as
'dlroute resolve --json' does: the repository's rules with the decision
module ($DLROUTE_DECISION_WASM, or the checked-in
wasm/decision/decision.wasm) and rules/plans.bin; --rules DIR with the
compiler module ($DLROUTE_WASM, or dlroute.wasm beside this script).

Flags:
  --ruleset NAME[@VERSION]  the rule set; without a version, the newest (default "jax")
  --rules DIR               read rule sets from DIR (holding <name>/<version>/) instead of the repository's rules/
  --json                    accepted, and changes nothing: input is always JSON Lines
`;

async function main(argv, stdin, stdout, stderr) {
  let flags;
  try {
    flags = parseArgs({
      args: argv,
      options: { ruleset: { type: "string", default: "jax" }, rules: { type: "string" }, json: { type: "boolean" }, help: { type: "boolean", short: "h" } },
    }).values;
  } catch (err) {
    stderr.write(`error: ${err.message}\nhint: see 'node resolve.mjs --help'\n`);
    return 2;
  }
  if (flags.help) {
    stdout.write(USAGE);
    return 0;
  }
  let ruleset;
  try {
    const engine = await load(flags.rules === undefined ? {} : { rules: flags.rules });
    ruleset = engine.ruleset(flags.ruleset);
  } catch (err) {
    if (!(err instanceof DlrouteError)) throw err;
    printError(stderr, err);
    return 1;
  }

  let status = 0;
  let n = 0;
  const answer = (lines, out) => {
    for (const line of lines) {
      const { text, ok } = answerLine(ruleset, ++n, line);
      if (!ok) status = 1;
      out.push(text, "\n");
    }
  };
  const split = new LineSplitter();
  for await (const chunk of stdin) {
    const out = [];
    answer(split.push(chunk), out);
    // One write per chunk read: a process that writes a line and waits
    // for its answer gets it now.
    if (out.length && !stdout.write(out.join(""))) await new Promise((resolve) => stdout.once("drain", resolve));
  }
  const out = [];
  const last = split.end();
  if (last) answer([last], out);
  if (out.length) stdout.write(out.join(""));
  return status;
}

/** printError writes an error as the Go command does: "error: ..." with its position, then "hint: ...". */
function printError(w, err) {
  for (const e of err instanceof LoadError ? err.errors : [err]) {
    w.write(`error: ${formatError(e)}\n`);
    if (e.hint) w.write(`hint: ${e.hint}\n`);
  }
}

process.exitCode = await main(process.argv.slice(2), process.stdin, process.stdout, process.stderr);
