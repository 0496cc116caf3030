import assert from "node:assert/strict";
import {test} from "node:test";

import {agreement, ranks, spearman} from "../../attention_lab/why/rank.mjs";

test("ranks from 1, ties sharing their mean rank", () => {
  assert.deepEqual(ranks([10, 30, 20, 20]), [1, 4, 2.5, 2.5]);
});

test("Spearman's rank correlation: 1 for the same order, -1 reversed, none where it is undefined", () => {
  assert.equal(spearman([1, 2, 3], [10, 20, 30]), 1);
  assert.equal(spearman([1, 2, 3], [3, 2, 1]), -1);
  assert.equal(spearman([1, 1, 1], [1, 2, 3]), null);
  assert.equal(spearman([1], [1]), null);
});

test("each head's agreement with an attribution of the same units", () => {
  const row = {stack: {L: 1, H: 2, K: 3, data: Float32Array.from([0.1, 0.2, 0.7, 0.7, 0.2, 0.1])}};
  assert.deepEqual(agreement(row, [1, 2, 3]), [[1, -1]]);
});
