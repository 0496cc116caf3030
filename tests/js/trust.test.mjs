import assert from "node:assert/strict";
import {test} from "node:test";

import {flagPlace, scoresOutput, trustFocus, trustRows, trustScores, wordValues}
  from "../../attention_lab/trust/trust.mjs";
import {valid} from "./messages.mjs";

const step = (n, share, logp, source) => ({step: n, token: `t${n}`, logp, source_share: share, source,
  prefix: Array(n).fill(0)});
const message = valid({op: "trust", pasted: null, method: "alti", title: "ALTI+", note: "n", tokens: [7, 8, 2],
  source: ["a", "b", "c", "</s>"], source_tokens: ["a", "b", "c", "</s>"], target_tokens: ["b", "a", "</s>"],
  labels: ["b", "a", "</s>"],
  words: [{label: "a", pieces: [0]}, {label: "bc", pieces: [1, 2]}], reads: [0.1, 1.9], uncovered_words: [0],
  steps: [step(1, 0.8, -0.1, [0.1, 0.5, 0.2, 0.0]), step(2, 0.1, null, [null, null, null, null]),
    step(3, 0.5, -2, [-0.4, 0.1, 0.1, 0.2])],
  sentence: {mean_logp: null, source_share: 0.45, coverage: 0.5, uncovered: ["a"], wass_to_unif: [0.25, 0.5],
    wass_to_data: [null, null], wass_combo: null},
  reading: {mean_logp: "how sure", source_share: "from the source", coverage: "words read", wass_to_unif: "even",
    wass_to_data: "correct", wass_combo: "both"},
  flags: [{kind: "forbidden", at: 2, message: "never"}, {kind: "uncovered", at: 1, message: "a"},
    {kind: "low_source", at: 2, message: "prefix"}]});

test("a bar per step, with the flags that point at its step (an uncovered word points at no step)", () => {
  const rows = trustRows(message);
  assert.deepEqual(rows.map((r) => [r.step, r.label, r.share, r.logp]), [[1, "b", 0.8, -0.1], [2, "a", 0.1, null],
    [3, "</s>", 0.5, -2]]);
  assert.deepEqual(rows.map((r) => r.flags), [[], ["forbidden", "low_source"], []]);
});

test("the sentence scores read −∞ for a forbidden token and name the words barely read", () => {
  const scores = trustScores(message);
  assert.deepEqual(scores.map((s) => s[0]), ["Mean log p", "Source share", "Coverage", "Wass-to-Unif", "Wass-to-Data",
    "Wass-Combo"]);
  assert.match(scores[0][1], /^−∞/);
  assert.equal(scores[1][1], "45%");
  assert.equal(scores[2][1], "50% (barely read: “a”)");
  assert.equal(scores[2][2], "words read");
});

test("the distances read one value per decoder layer, and say so when a model has nothing to compare with", () => {
  const scores = trustScores(message);
  assert.equal(scores[3][1], "L1 0.250 · L2 0.500");
  assert.match(scores[4][1], /^— \(no correct translations/);
  assert.equal(scores[5][1], "—");
  const compared = {...message, sentence: {...message.sentence, wass_to_data: [0.02, 0.031], wass_combo: 0.031}};
  assert.equal(trustScores(compared)[4][1], "L1 0.020 · L2 0.031");
  assert.equal(trustScores(compared)[5][1], "0.031");
});

test("a flag points at its step, or at a source word (0-based) for an uncovered one", () => {
  assert.deepEqual(message.flags.map(flagPlace), [{step: 2}, {word: 0}, {step: 2}]);
});

test("a word's value at a step is the sum over its pieces, nulls left out", () => {
  assert.deepEqual(wordValues(message, 1), {values: [0.1, 0.7], most: 0.7});
  assert.deepEqual(wordValues(message, 2), {values: [null, null], most: 0});
  assert.equal(wordValues(message, 3).values[0], -0.4);
  assert.equal(wordValues(message, 3).most, 0.4);
});

test("the output's score follows the page's shown step; a pasted translation's keeps its own", () => {
  const decoding = {steps: [{token: 7}, {token: 8}, {token: 2}]};
  assert.equal(scoresOutput(message, decoding), true);
  assert.equal(scoresOutput(message, {steps: [{token: 7}, {token: 9}, {token: 2}]}), false); // a what-if since
  assert.equal(trustFocus(message, decoding, 3, 1), 3);
  const pasted = {...message, pasted: "ba"};
  assert.equal(scoresOutput(pasted, decoding), false);
  assert.equal(trustFocus(pasted, decoding, 3, 1), 1);
  assert.equal(trustFocus(pasted, decoding, 3, 9), null); // past its steps
});
