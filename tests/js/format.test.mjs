import assert from "node:assert/strict";
import {test} from "node:test";

import {pyFixed, pyFormat, pyRound} from "../../attention_lab/assets/format.mjs";
import {massDistance, toUnif, wassCombo} from "../../attention_lab/trust/wasserstein.mjs";

test("numbers are rounded as Python rounds them: halfway, to the even one", () => {
  // format(x, ".2f") and format(x, ".0f") in Python; toFixed gives 0.13, -0.13, 63 and 0.007813
  assert.deepEqual([pyFixed(0.125, 2), pyFixed(-0.125, 2), pyFixed(62.5, 0), pyFixed(0.375, 2)],
    ["0.12", "-0.12", "62", "0.38"]);
  assert.deepEqual([pyRound(0.0078125, 6), pyRound(12.3456789, 6), pyRound(0.1234565, 6)], [0.007812, 12.345679, 0.123456]);
});

test("a template is filled as str.format fills it, the values left as they are", () => {
  assert.equal(pyFormat('"{label}" takes {share:.0%} ({read:.2f}) at step {step} {{x}}', {label: "{a}", share: 0.625,
    read: 0.125, step: 3}), '"{a}" takes 62% (0.12) at step 3 {x}');
  assert.throws(() => pyFormat("{x:>5}", {x: 1}), /formats/);
});

test("the attention distances are wasserstein.py's", () => {
  assert.equal(toUnif([1, 0, 0, 0]), 0.75);
  assert.equal(massDistance([3, 1], [2, 2]), 0.125); // scipy.stats.wasserstein_distance([.25, .75], [.25, .75], [3, 1], [2, 2])
  assert.equal(massDistance([1], [0, 1]), 0.25);
  const rule = {threshold: 0.5, unif: [0.2, 0.6], data: [0.01, 0.11]};
  assert.equal(wassCombo(0.4, 0.03, rule), 0.03);
  assert.ok(Math.abs(wassCombo(0.6, 0.03, rule) - 0.11) < 1e-12);
});
