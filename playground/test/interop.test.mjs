// The interop grid's pure parts (interop.js): how a cell reads, which
// step opening it shows, the producers' row groups, the arrow keys.

import assert from "node:assert/strict";
import { test } from "node:test";

import { cellView, checkedText, decidingStep, fixParts, kindOf, laneText, outcomeWords, producerGroups, moveTo, stepText, summaryText } from "../interop.js";

const step = (ref, call, decision, attempt = 1) => ({ ref, call, attempt, input: {}, decision: { rule: "r", ruleset: ref, ...decision } });
const cuda = { device_type: "kDLCUDA", device_type_code: 2, device_id: 0 };

// The seed's case into torch: jax's __dlpack_device__ raises.
const seed = {
  outcome: "error", short: "BufferError: Unknown GPU plat…k__: <unknown>",
  error: { type: "BufferError", message: "Unknown GPU platform for __dlpack__: <unknown>" },
  steps: [step("torch@v1", "request", {}), step("jax@v3", "__dlpack_device__", { error: { type: "BufferError", message: "Unknown GPU platform for __dlpack__: <unknown>" } })],
};

test("cellView: the outcome in words and a mark, not colour alone", () => {
  assert.deepEqual(cellView({ outcome: "in_place", short: "in place", steps: [] }), { kind: "in-place", mark: "✓", type: "", whole: "in place", full: "in place" });
  assert.deepEqual(cellView({ outcome: "consumer_copy", short: "copy (consumer)", steps: [] }), { kind: "copy", mark: "⇄", type: "", whole: "copy (consumer)", full: "copy (consumer)" });
  assert.equal(cellView({ outcome: "both_copy", short: "copy (both)" }).kind, "copy");
  const v = cellView(seed);
  assert.equal(v.kind, "error");
  assert.equal(v.mark, "✗");
  assert.equal(v.type, "BufferError");
  assert.equal(v.whole, ": Unknown GPU platform for __dlpack__: <unknown>", "the cell has the whole message, not the short one");
  assert.equal(v.full, "BufferError: Unknown GPU platform for __dlpack__: <unknown>");
  assert.deepEqual(cellView({ outcome: "error", short: "AssertionError", error: { type: "AssertionError", message: "" } }),
    { kind: "error", mark: "✗", type: "AssertionError", whole: "", full: "AssertionError" });
});

test("decidingStep: the step that raised, the __dlpack__ that copied, or the last", () => {
  assert.equal(decidingStep(seed), 1);
  // A TypeError the consumer answers by trying again did not decide: the
  // second attempt's exception did.
  const retried = {
    outcome: "error", error: { type: "BufferError", message: "b" },
    steps: [step("torch@v1", "request", {}), step("cupy@v1", "__dlpack__", { error: { type: "TypeError", message: "a" } }),
      step("torch@v1", "request", {}, 2), step("cupy@v1", "__dlpack__", { error: { type: "BufferError", message: "b" } }, 2)],
  };
  assert.equal(decidingStep(retried), 3);
  const copied = { outcome: "producer_copy", steps: [step("numpy@v2", "request", {}), step("cupy@v1", "__dlpack__", { ...cuda, copy: true }), step("numpy@v2", "from_dlpack", cuda)] };
  assert.equal(decidingStep(copied), 1);
  assert.equal(decidingStep({ ...copied, outcome: "in_place" }), 2);
  assert.equal(decidingStep({ ...copied, outcome: "consumer_copy" }), 2);
});

test("producerGroups: one table body per run of a producer's rows", () => {
  const rows = [{ producer: "cupy@v1" }, { producer: "jax@v3" }, { producer: "jax@v3" }, { producer: "numpy@v2" }];
  assert.deepEqual(producerGroups(rows).map((g) => [g.producer, g.rows.map((r) => r.index)]), [["cupy@v1", [0]], ["jax@v3", [1, 2]], ["numpy@v2", [3]]]);
  assert.equal(producerGroups(rows)[1].rows[0].row, rows[1]);
  assert.deepEqual(producerGroups([]), []);
});

test("moveTo: the arrow keys, Home and End, kept inside the grid", () => {
  assert.deepEqual(moveTo([1, 1], "ArrowUp", 3, 4), [0, 1]);
  assert.deepEqual(moveTo([0, 1], "ArrowUp", 3, 4), [0, 1], "the top row stays");
  assert.deepEqual(moveTo([2, 1], "ArrowDown", 3, 4), [2, 1], "the bottom row stays");
  assert.deepEqual(moveTo([1, 0], "ArrowLeft", 3, 4), [1, 0]);
  assert.deepEqual(moveTo([1, 3], "ArrowRight", 3, 4), [1, 3]);
  assert.deepEqual(moveTo([1, 2], "ArrowRight", 3, 4), [1, 3]);
  assert.deepEqual(moveTo([1, 2], "Home", 3, 4), [1, 0]);
  assert.deepEqual(moveTo([1, 2], "End", 3, 4), [1, 3]);
  assert.deepEqual(moveTo([1, 2], "Home", 3, 4, true), [0, 0]);
  assert.deepEqual(moveTo([1, 2], "End", 3, 4, true), [2, 3]);
  assert.equal(moveTo([1, 2], "Enter", 3, 4), null, "Enter is the button's own");
  assert.equal(moveTo([1, 2], "a", 3, 4), null);
});

test("stepText and summaryText", () => {
  assert.equal(stepText(seed.steps[1]), "jax@v3 __dlpack_device__ → BufferError: Unknown GPU platform for __dlpack__: <unknown>");
  assert.equal(stepText(step("cupy@v1", "__dlpack__", { ...cuda, copy: true }, 2)), "cupy@v1 __dlpack__ (attempt 2) → (kDLCUDA, 0), copy");
  assert.equal(stepText(step("torch@v1", "request", {})), "torch@v1 request");
  const doc = { consumers: ["numpy@v2", "torch@v1"], rows: [{ producer: "jax@v3" }, { producer: "jax@v3" }, { producer: "numpy@v2" }] };
  assert.equal(summaryText(doc), "3 arrays of 2 producers into 2 consumers");
  assert.equal(summaryText({ error: "rules/jax/v9: ...", rows: [], consumers: [] }), "no grid: the rules served do not load");
});

test("checkedText: whether both sides were run here, and each version's releases", () => {
  const run = { run: true, producer: [{ ruleset: "numpy@v1", checked: { "2.4.6": "run" } }], consumer: [{ ruleset: "torch@v1", checked: { "1.13.1": "run" } }] };
  assert.equal(checkedText({ checked: run }), "Run here on both sides: numpy@v1: 2.4.6 (run here); torch@v1: 1.13.1 (run here).");
  const warned = { message: "numpy 9.1 is newer than every release dlroute checked; using numpy@v2, checked against 2.5.2 (source only)" };
  const not = { run: false, producer: [{ ruleset: "numpy@v1", checked: { "2.4.6": "run", "2.4.0": "source" } }], consumer: [{ ruleset: "numpy@v2", checked: { "2.5.2": "source" }, release_warning: warned }] };
  assert.equal(checkedText({ checked: not }), `Not run here on both sides: numpy@v1: 2.4.6 (run here), 2.4.0 (source only); numpy@v2: 2.5.2 (source only); ${warned.message}.`);
  assert.equal(checkedText({}), "");
});

// A negated torch view into numpy: it crosses, and numpy reads the values
// with their sign flipped (rules/numpy/v1/tests.yaml).
const silent = {
  outcome: "error", short: "SilentlyDifferent: the capsule holds the…", lane: "dlpack",
  error: { type: "SilentlyDifferent", message: "the capsule holds the memory of a negated view (x.is_neg()), which DLPack cannot say" },
  remedy: { kind: "resolve_neg", fix: "x.resolve_neg()", outcome: "in_place" },
  steps: [],
};

test("a silent difference is drawn as a warning, not as an exception", () => {
  assert.equal(kindOf(silent), "silent");
  assert.equal(kindOf(seed), "error");
  assert.equal(kindOf({ outcome: "in_place" }), "in-place");
  assert.equal(kindOf({ outcome: "producer_copy" }), "copy");
  const v = cellView(silent);
  assert.equal(v.kind, "silent");
  assert.equal(v.mark, "⚠");
  assert.equal(v.type, "silently different", "in words, not as an exception type");
  assert.equal(v.full, "silently different, nothing raises: the capsule holds the memory of a negated view (x.is_neg()), which DLPack cannot say");
  assert.equal(cellView({ ...silent, error: { type: "SilentlyDifferent", message: "" } }).full, "silently different, nothing raises");
});

test("fixParts: the fix as the user writes it, and what it comes to", () => {
  assert.deepEqual(fixParts(silent, "torch@v3", "numpy@v2"), { fix: "x.resolve_neg()", outcome: "in place" });
  const contiguous = { ...seed, remedy: { kind: "contiguous", fix: "x.contiguous()", outcome: "consumer_copy" } };
  assert.deepEqual(fixParts(contiguous, "torch@v3", "jax@v3"), { fix: "x.contiguous()", outcome: "a copy, made by jax" });
  assert.equal(fixParts(seed, "jax@v3", "torch@v3"), null, "no remedy in the document: nothing to show");
  assert.equal(fixParts({ ...seed, remedy: null }, "jax@v3", "torch@v3"), null);
  assert.equal(outcomeWords("producer_copy", "numpy@v2", "torch@v3"), "a copy, made by numpy");
  assert.equal(outcomeWords("both_copy", "numpy@v2", "torch@v3"), "two copies, one made by numpy and one by torch");
  assert.equal(outcomeWords("error", "numpy@v2", "torch@v3"), "an exception");
});

test("laneText: how the consumer reads the array, and the other way where it differs", () => {
  assert.equal(laneText({ outcome: "in_place", lane: "dlpack" }, "numpy@v2", "torch@v3"), "torch reads numpy's array by x.__dlpack__().");
  assert.equal(laneText(seed, "jax@v3", "torch@v3"), "", "a cell that does not say its lane");
  assert.equal(laneText({ ...seed, lane: "dlpack" }, "jax@v3", "torch@v3"), "torch asks for jax's array by x.__dlpack__().", "a refusal reads nothing");
  assert.equal(laneText({ outcome: "in_place", lane: "c_exchange_api", other_lane: "consumer_copy" }, "paddle@v1", "torch@v3"),
    "torch reads paddle's array by the C exchange API (type(x).__dlpack_c_exchange_api__); by x.__dlpack__() instead, it would be a copy, made by torch.");
  assert.equal(laneText({ ...seed, lane: "dlpack", other_lane: "in_place" }, "paddle@v1", "torch@v3"),
    "torch asks for paddle's array by x.__dlpack__(); by the C exchange API (type(x).__dlpack_c_exchange_api__) instead, it would be in place.");
  assert.equal(laneText(silent, "torch@v3", "numpy@v2"), "numpy reads torch's array by x.__dlpack__().", "a silent difference is read");
});
