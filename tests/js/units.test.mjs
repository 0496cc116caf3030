import assert from "node:assert/strict";
import {test} from "node:test";

import {head, inUnits, scaled, units, unit, valueWeighted} from "../../attention_lab/assets/units.mjs";

const close = (a, b, eps = 1e-6) => a.forEach((v, i) => assert.ok(Math.abs(v - b[i]) <= eps, `${i}: ${v} vs ${b[i]}`));
// pieces "I", "ha", "##ve", "</s>": the middle two one word
const seq = {labels: ["I", "ha", "##ve", "</s>"], words: ["I", "ha", "have", "</s>"], group: [0, 1, 1, 2],
  special: [false, false, false, true]};

test("pieces of one word merge into one unit; pieces stay pieces otherwise", () => {
  assert.deepEqual(units(seq, 4, true), {labels: ["I", "have", "</s>"], groups: [[0], [1, 2], [3]], special: [false, false, true]});
  assert.deepEqual(units(seq, 4, false).labels, ["I", "ha", "##ve", "</s>"]);
  assert.deepEqual(units(seq, 2, true).labels, ["I", "ha"]); // a prefix's last word, cut short
});

test("a word's column is the sum of its pieces' columns and its row the mean of their rows", () => {
  const data = Float32Array.from([0.1, 0.2, 0.3, 0.4, 0.5, 0.25, 0.25, 0, 0, 1, 0, 0, 0.25, 0.25, 0.25, 0.25]);
  const u = units(seq, 4, true);
  const merged = inUnits({L: 1, H: 1, Q: 4, K: 4, data}, u, u, false);
  close(Array.from(merged.data), [0.1, 0.5, 0.4, 0.25, 0.75, 0, 0.25, 0.5, 0.25]);
  for (let r = 0; r < 3; r++) close([merged.data.slice(3 * r, 3 * r + 3).reduce((a, b) => a + b)], [1]);
});

test("hiding special tokens drops them and renormalises every row, and a row of only specials stays 0", () => {
  const data = Float32Array.from([0.5, 0.5, 0, 1]);
  const cols = {labels: ["a", "</s>"], groups: [[0], [1]], special: [false, true]};
  const rows = {labels: ["x", "y"], groups: [[0], [1]], special: [false, false]};
  const hidden = inUnits({L: 1, H: 1, Q: 2, K: 2, data}, rows, cols, true);
  assert.deepEqual([hidden.Q, hidden.K], [2, 1]);
  close(Array.from(hidden.data), [1, 0]);
});

test("value-weighting takes each row's shares of weight times norm", () => {
  const weighted = valueWeighted({L: 1, H: 1, Q: 1, K: 2, data: Float32Array.from([0.5, 0.5])}, Float32Array.from([1, 3]));
  close(Array.from(weighted.data), [0.25, 0.75]);
});

test("the colour scales: linear, log floored at 1e-4, each row over its maximum", () => {
  const z = Float32Array.from([1, 0.5, 0, 0.25]);
  close(Array.from(scaled(z, 2, 2, "linear")), [1, 0.5, 0, 0.25]);
  close(Array.from(scaled(z, 2, 2, "log")), [0, Math.log10(0.5), -4, Math.log10(0.25)], 1e-6);
  close(Array.from(scaled(z, 2, 2, "row")), [1, 0.5, 0, 1]);
  assert.equal(unit(-4, "log"), 0);
  assert.equal(unit(0, "log"), 1);
});

test("the focused head is that head's weights; the mean averages every head; a rollout shows one layer", () => {
  const data = Float32Array.from([1, 0, 0, 1, 0.5, 0.5, 0.25, 0.75]); // L 2, H 2, 1 × 2 each
  const stack = {L: 2, H: 2, Q: 1, K: 2, data};
  assert.deepEqual(Array.from(head(stack, [1, 0], false).z), [0.5, 0.5]);
  close(Array.from(head(stack, null, false).z), [0.4375, 0.5625]);
  assert.equal(head(stack, [5, 0], false).name, "mean of all heads"); // a head the model does not have
  assert.equal(head({L: 2, H: 1, Q: 1, K: 2, data: data.subarray(0, 4)}, null, true).name, "rollout through layer 2");
});
