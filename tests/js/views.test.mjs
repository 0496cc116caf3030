import assert from "node:assert/strict";
import {test} from "node:test";

import {Decoding} from "../../attention_lab/assets/decoding.mjs";
import {compareFigure} from "../../attention_lab/compare/compare.mjs";
import {now} from "../../attention_lab/decoding/looked_at.mjs";
import {chartFigure} from "../../attention_lab/training/film.mjs";
import {lensFigure} from "../../attention_lab/why/lens.mjs";
import {summed, why} from "../../attention_lab/why/why.mjs";
import {key, payload} from "./helpers.mjs";
import {valid} from "./messages.mjs";

const look = {words: true, hideSpecials: false, scale: "linear", focus: null, reading: "weights"};

test("what the model looked at: the step's cross-attention over the source words", () => {
  const d = new Decoding(payload({S: 5, T: 3}));
  assert.deepEqual(now(d, 0, look), {empty: true});
  const state = now(d, 2, look);
  assert.equal(state.token, "o1");
  const top = state.words.reduce((best, w, i, all) => (w.weight > all[best].weight ? i : best), 0);
  assert.equal(top, 5 - 2 - 1); // step 2 looks at source position S - 2 - 1, as the made-up decoding does
  assert.ok(Math.abs(state.words.reduce((s, w) => s + w.weight, 0) - 1) < 1e-4);
  assert.equal(now(d, 2, {...look, hideSpecials: true}).words.length, 4);
});

test("why: a word's attribution is its pieces' sum, and each head's agreement ranks as attention does", () => {
  const d = new Decoding(payload({S: 4, T: 2}));
  assert.deepEqual(summed([1, 2, 3], [[0, 1], [2]]), [3, 3]);
  const message = valid({op: "why", key: key(1, 1), method: "occlusion", aggregate: "sum", title: "Occlusion",
    notes: {method: "m", words: "w", agreement: "a"}, tokens: [10, 11], lens: null,
    steps: [{source: [0.1, 0.2, 0.9, 0], prefix: [0.1], source_share: 0.9, log_prob: -0.1},
      {source: [0.1, 0.9, 0.2, 0], prefix: [0.1, 0.2], source_share: 0.8, log_prob: -0.2}]});
  const state = why(d, message, 1, look);
  assert.equal(state.token, "o0");
  // attention [1/6, 1/6, 1/2, 1/6] ranks as [0.1, 0.2, 0.9, 0] does but for its ties: rho = 0.77 for every head
  assert.deepEqual(state.agreement.cross.map((row) => row.map((v) => Math.round(v * 100) / 100)), [[0.77, 0.77], [0.77, 0.77]]);
  assert.equal(why(d, {...message, tokens: [99, 11]}, 1, look).empty, "Attributing this step…"); // another decoding's
  assert.match(why(d, message, 0, look).empty, /Nothing written yet/);
});

test("compare: the decoding before beside this one, the changed step outlined in both", () => {
  const data = payload({S: 4, T: 3});
  assert.equal(compareFigure(new Decoding(data), look), null); // nothing before
  data.original = {out: data.out, at: 2, cross: data.steps.map((s) => s.cross)};
  const fig = compareFigure(new Decoding(data), look);
  assert.equal(fig.data.length, 2);
  assert.deepEqual(fig.layout.shapes.map((s) => [s.y0, s.y1]), [[0.5, 1.5], [0.5, 1.5]]);
});

test("the training chart marks the shown snapshot; the lens outlines where the written token settles", () => {
  const film = {model: "m", factors: {"validation exact match": 100}, snapshots: [
    {step: 0, loss: 3, alignment: 0.1, scores: {"validation exact match": 0}},
    {step: 1200, loss: 1, alignment: 0.9, scores: {"validation exact match": 0.5}}]};
  const chart = chartFigure(film, 1);
  assert.deepEqual(chart.data.map((t) => t.name), ["validation loss", "best cross head's alignment, this source (%)",
    "validation exact match (%)"]);
  assert.deepEqual([chart.layout.shapes[0].x0, chart.layout.title.text], [0.6, "m across training: step 1,200 shown"]);
  const d = new Decoding(payload({T: 2}));
  const lens = {layers: 2, top: [[[["a", 0.5]], [["o0", 0.9]]], [[["b", 0.5]], [["o1", 0.8]]]],
    written: [[0.1, 0.9], [0.2, 0.8]], settled: [2, null]};
  const fig = lensFigure(d, lens, 1);
  assert.deepEqual(fig.data[0].text, [["a", "b"], ["o0", "o1"]]);
  assert.equal(fig.layout.shapes.length, 2); // step 1 settles at layer 2; the shown step's column
});
