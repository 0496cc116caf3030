import assert from "node:assert/strict";
import {test} from "node:test";

import {largest, restoredGrid, stepFigures, stepOf, summary, traceFigure} from "../../attention_lab/patch/patch.mjs";
import {valid} from "./messages.mjs";

const record = (step, token, enc, dec, cross) => ({step, token, clean_logp: -0.1, corrupted_logp: -3,
  encoder_states: enc, decoder_states: dec, heads: {encoder: [[0, 0]], decoder_self: [[0, 0]], cross}});
const message = valid({op: "patch", tokens: [7, 8], source: ["a", "b", "</s>"], prefix: ["<s>", "b"], noise: [],
  words: [{label: "a", pieces: [0]}, {label: "b", pieces: [1]}],
  steps: [record(1, "b", [[0, 0.95, 0], [0.02, 0.99, -0.01]], [[0.5]], [[0.3, 0.7]]),
    record(2, "a", [[null, null, null], [null, null, null]], [[null, null]], [[null, null]])]});

test("the largest r and where it is, nulls left out", () => {
  assert.deepEqual(largest([[null, 0.2], [0.9, -1]]), {value: 0.9, row: 1, column: 0});
  assert.equal(largest([[null]]), null);
});

test("a step is drawn only for the decoding it patched", () => {
  const decoding = {steps: [{token: 7}, {token: 8}]};
  assert.equal(stepOf(message, decoding, 2), message.steps[1]);
  assert.equal(stepOf(message, {steps: [{token: 7}, {token: 9}]}, 2), null); // a what-if wrote another token
  assert.equal(stepOf(message, decoding, 0), null);
  assert.equal(stepOf(message, {steps: [{token: 7}, {token: 8}, {token: 2}]}, 3), null); // a step it has not patched
});

test("the summary names the position, the layer, the head and the decoder state that restore most", () => {
  const line = summary(message.steps[0], message);
  assert.match(line, /source position 2 \(“b”\): restoring it after encoder layer 2 brings back 99% \(≥ 50% after 2 of 2 layers\)/);
  assert.match(line, /cross 1\.2 restores most \(70%\)/);
  assert.match(line, /layer 1 at “<s>” \(50%\)/);
  assert.match(summary(message.steps[1], message), /hardly changes it, nothing to restore/);
});

test("grids are centred on 0 with 1 marked fully restored, values written only where cells are wide", () => {
  const figures = stepFigures(message.steps[0], message, {site: "cross", layer: 0, index: 1}, {encoder_states: 900});
  const [name, figure] = figures[0];
  assert.equal(name, "encoder_states");
  const trace = figure.data[0];
  assert.deepEqual([trace.zmin, trace.zmid, trace.zmax], [-1, 0, 1]);
  assert.ok(trace.colorbar.ticktext.includes("1: fully restored") && trace.showscale);
  assert.equal(trace.texttemplate, "%{text}");
  assert.equal(restoredGrid([[0.1, 0.2, 0.3]], ["x", "y", "z"], ["layer 1"], "t", null, 150).data[0].texttemplate, "");
  const cross = figures.find(([site]) => site === "cross")[1];
  assert.equal(cross.layout.shapes.length, 1); // the picked head outlined
  assert.equal(cross.data[0].showscale, false);
});

test("a picked part's r at every step, null where there is nothing to restore", () => {
  const figure = traceFigure(message, {site: "encoder_states", layer: 1, index: 1});
  assert.deepEqual(figure.data[0].y, [0.99, null]);
  assert.match(figure.layout.title.text, /encoder layer 2 at “b”/);
  assert.deepEqual(traceFigure(message, {site: "decoder_states", layer: 0, index: 1}).data[0].y, [null, null]);
});
