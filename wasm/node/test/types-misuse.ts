// Uses of the package that index.d.ts must refuse: each line below
// `// @ts-expect-error` is a mistake a caller could make, and tsc fails
// ("Unused '@ts-expect-error' directive") if the declarations let it
// through. TestTypes type-checks this file; it is never run.

import { DlrouteError, Engine, RuleSet, load, packRules } from "dlroute";

export async function misuse(engine: Engine, jax: RuleSet, err: DlrouteError): Promise<void> {
  // @ts-expect-error a platform version is a string or a function, not a number
  await load({ platformVersion: 12030 });
  // @ts-expect-error platformVersion's function is synchronous
  await load({ platformVersion: async () => "cuda 12030" });
  // @ts-expect-error copyToHost takes and returns an ArrayBuffer
  await load({ copyToHost: (source: Uint8Array) => source });
  // @ts-expect-error there is no such option
  await load({ rule: "rules/" });
  // @ts-expect-error load is asynchronous: an Engine is awaited
  load().ruleset("jax");
  // @ts-expect-error an Engine is made by load
  new Engine();
  // @ts-expect-error a rule set is got from an engine
  new RuleSet();
  // @ts-expect-error resolve takes an input object, not its JSON
  jax.resolve('{"platform":"cpu"}');
  // @ts-expect-error a decision may be an exception, with no device_type
  jax.resolve({ platform: "cpu" }).device_type;
  // @ts-expect-error resolveJSON answers text
  jax.resolveJSON("{}").rule;
  // @ts-expect-error exchange takes the array's bytes as an ArrayBuffer
  jax.exchange({ platform: "cpu" }, new Uint8Array(4));
  // @ts-expect-error a rule set's ref is read-only
  jax.ref = "jax@v1";
  // @ts-expect-error packRules takes a directory, not an archive
  await packRules(new Uint8Array(0));
  // @ts-expect-error engine.load is awaited for its errors, and answers nothing
  (await engine.load("rules/")).ref;
  // @ts-expect-error a position's line is a number
  const line: string = err.position?.line ?? "";
  void line;
}
