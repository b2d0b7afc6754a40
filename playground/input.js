// The input as the page holds it: one JSON line, the one the engine gets
// and `dlroute resolve --json` reads. The page checks only what the engine
// cannot be sent (too large, not a JSON object); the engine says what is
// wrong with the values. Nothing here touches the page (test/input.test.mjs).

// MAX_INPUT_BYTES is the most input the page sends the engine: its own
// limits (strings up to 4096 bytes) answer anything between with
// too_long.
export const MAX_INPUT_BYTES = 1 << 20;

// checkInput returns {object, problem}: the input parsed, or null and a
// sentence for the person saying why it is not sent.
export function checkInput(text) {
  const bytes = new TextEncoder().encode(text).length;
  if (bytes > MAX_INPUT_BYTES) {
    return { object: null, problem: `the input is ${mib(bytes)} MiB; the page sends at most 1 MiB (the engine takes strings up to 4096 bytes)` };
  }
  let object;
  try {
    object = JSON.parse(text);
  } catch (e) {
    return { object: null, problem: `the input is not valid JSON: ${e.message}` };
  }
  if (typeof object !== "object" || object === null || Array.isArray(object)) {
    return { object: null, problem: "the input must be a JSON object" };
  }
  return { object, problem: "" };
}

// inputObject is the input parsed when it is a JSON object, else null.
export function inputObject(text) {
  try {
    const obj = JSON.parse(text);
    return obj && typeof obj === "object" && !Array.isArray(obj) ? obj : null;
  } catch {
    return null;
  }
}

// keepDeclared is the input with only the fields a rule set declares
// (names), for a change of rule set; text as it is when it is not an
// object.
export function keepDeclared(text, names) {
  const obj = inputObject(text);
  if (!obj) return text;
  const keep = new Set(names);
  return JSON.stringify(Object.fromEntries(Object.entries(obj).filter(([k]) => keep.has(k))));
}

// inputErrorText is an engine input_error as the page shows it.
export function inputErrorText(e) {
  return `${e.code}: ${e.message}${e.hint ? ` (hint: ${e.hint})` : ""}`;
}

function mib(bytes) {
  return (bytes / 1048576).toFixed(1);
}
