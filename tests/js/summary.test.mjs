import assert from "node:assert/strict";
import {test} from "node:test";

import {short, summaryGrid} from "../../attention_lab/core/grids.mjs";
import {effectsFigure} from "../../attention_lab/heads/effects.mjs";
import {pruningFigure} from "../../attention_lab/survey/report.mjs";
import {valid} from "./messages.mjs";

const data = valid({op: "summary", title: "<t>", kinds: ["encoder", "cross"], short: {encoder: "enc self", cross: "cross"},
  layers: 2, heads: 2, metrics: [
    {key: "entropy", name: "entropy (nats)", note: "low", colouring: "size", grids: {encoder: [[1, 2], [3, 4]], cross: [[0.5, null], [1, 1]]}},
    {key: "offset", name: "offset", note: "signed", colouring: "signed", grids: {encoder: [[-1, 1], [0, 2]], cross: [[1, 1], [1, 1]]}},
  ]});

test("a cell writes its value as its measure reads", () => {
  assert.equal(short(0.4237, "share"), "42%");
  assert.equal(short(0.00012, "size"), "1.2e-4");
  assert.equal(short(0.05, "size"), "0.050");
  assert.equal(short(1.5, "signed"), "+1.50");
  assert.equal(short(-12, "signed"), "-12");
  assert.equal(short(0, "size"), "0");
});

test("the summary: a row of grids per measure, a block per kind, each cell naming its head", () => {
  const grid = summaryGrid(data);
  assert.equal(grid.measures.length, 2);
  const [entropy, offset] = grid.measures;
  assert.deepEqual(grid.kinds, ["enc self", "cross"]);
  assert.equal(entropy.rows[0].length, 2 * 2); // two blocks of two heads
  assert.equal(entropy.rows[1][3].where, "cross|Layer 2 · Head 2");
  assert.equal(entropy.rows[0][3], null); // no value: no cell, no head to focus
  assert.equal(entropy.rows[1][0].text, "3.00");
  assert.match(entropy.rows[1][0].hover, /Layer 2 · Head 1 \(enc self\)\nentropy \(nats\): 3\.000/);
  // a size from 0 to its largest: the largest the darkest, with light text on it; the least the lightest
  assert.notEqual(entropy.rows[1][1].fill, entropy.rows[0][2].fill);
  assert.equal(entropy.rows[1][1].ink, "#fff");
  assert.equal(entropy.rows[0][2].ink, "#222");
  // signed: around 0, white at 0, blue below and red above, the scale as wide as the largest size either way
  const rgb = (cell) => cell.fill.match(/\d+/g).map(Number);
  assert.ok(rgb(offset.rows[1][0]).every((c) => c >= 240)); // 0
  const [r, , b] = rgb(offset.rows[0][0]); // -1 of ±2: a quarter of the way up the scale
  assert.ok(b > r + 50 && r > 33);
  assert.equal(offset.rows[1][1].fill, "rgb(178,24,43)"); // +2: the top
  assert.equal(offset.rows[0][1].text, "+1.00");
  assert.equal(grid.title, "<t>"); // the elements' text: no markup to escape
});

test("an ablation's effects: red where the top token changes, hover the ablated top 3", () => {
  const fig = effectsFigure(valid({op: "effects", held: "Ablated: x", steps: [
    {step: 1, label: "a", kl: 0.1, changed: false, top: [["a", 0.9]]},
    {step: 2, label: "<b>", kl: 2, changed: true, top: [["c", 0.5]]}]}));
  assert.deepEqual(fig.data.map((t) => t.x), [["1: a"], ["2: &lt;b&gt;"]]);
  assert.match(fig.layout.title.text, /changes at 1 of 2 steps/);
});

test("the pruning curves: the score against the share of heads pruned", () => {
  const points = [{fraction: 0, heads: 0, score: 10}, {fraction: 1, heads: 4, score: 2}];
  const fig = pruningFigure({model: "m", sentences: 3, score: {name: "BLEU", value: 10}, pruning: points,
    pruning_by_kind: {cross: points}});
  assert.deepEqual(fig.data[0].x, [0, 100]);
  assert.equal(fig.data.length, 2);
});

test("at a phone's width the cells leave their values to the hover", () => {
  const wide = summaryGrid(data, 900), narrow = summaryGrid(data, 160);
  assert.equal(wide.written, true);
  assert.equal(narrow.written, false);
  assert.equal(wide.measures[0].rows[0][0].text, "1.00");
  assert.equal(narrow.measures[0].rows[0][0].text, "");
  assert.match(narrow.measures[0].rows[0][0].hover, /: 1\.000$/);
});
