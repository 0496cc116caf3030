import assert from "node:assert/strict";
import {test} from "node:test";

import {Decoding} from "../../attention_lab/assets/decoding.mjs";
import {focusFigure, gridFigure, kindFigures, MIN_ROW_PX, tiles, tileShapes} from "../../attention_lab/attention/figures.mjs";
import {setNames} from "../../attention_lab/assets/store.mjs";
import {NAMES, payload} from "./helpers.mjs";

setNames(NAMES);

const look = {words: true, hideSpecials: false, scale: "linear", focus: null, reading: "weights"};

test("every head is one tiled trace with null gaps between the heads", () => {
  const L = 2, H = 3, Q = 3, K = 9;
  const stack = {L, H, Q, K, data: Float32Array.from({length: L * H * Q * K}, (_, i) => (i % 7) / 7)};
  const t = tiles(stack, "linear");
  assert.deepEqual([t.gapQ, t.gapK], [1, 1]); // round(0.12 * 3), round(0.12 * 9): at least 1
  assert.equal(t.z.length, L * (Q + 1) - 1);
  assert.equal(t.z[0].length, H * (K + 1) - 1);
  assert.ok(t.z[Q].every((v) => v === null) && t.z.every((row) => row[K] === null));
  assert.equal(t.ticksY.length, L);
  const bigger = tiles({L: 1, H: 1, Q: 20, K: 20, data: new Float32Array(400)}, "linear");
  assert.equal(bigger.gapQ, 2); // bigger tiles, bigger gaps
});

test("the current row is outlined in every tile with one path, and the focused head's tile", () => {
  const stack = {L: 2, H: 2, Q: 3, K: 4, data: new Float32Array(48)};
  const t = tiles(stack, "linear");
  const [path, focused] = tileShapes(stack, t, 1, [1, 0]);
  assert.equal(path.type, "path");
  assert.equal((path.path.match(/M/g) || []).length, 4);
  assert.deepEqual([focused.x0, focused.y0], [-0.5, 3.5]);
  assert.equal(tileShapes(stack, t, null, null).length, 0);
});

test("the focused head fits its height: its rows pan around the current one when they do not", () => {
  const Q = 60, K = 5;
  const focused = {z: new Float32Array(Q * K), Q, K, rows: [...Array(Q).keys()].map(String), cols: "abcde".split("")};
  const fig = focusFigure(focused, look, "title", 50, ["rows", "cols"], 400);
  assert.ok(fig.layout.height <= 400 && fig.layout.height >= 200);
  const [low, high] = fig.layout.yaxis.range;
  assert.ok(high < 50 && low > 50, [low, high]); // around row 50
  assert.ok(low - high <= (400 - fig.layout.margin.t - fig.layout.margin.b) / MIN_ROW_PX);
  const short = focusFigure({...focused, Q: 3, z: new Float32Array(15), rows: ["a", "b", "c"]}, look, "t", 0, ["r", "c"], 400);
  assert.equal(short.layout.yaxis.range, undefined); // three rows fit: no pan
});

test("a kind's figures, and why there are none", () => {
  const d = new Decoding(payload({S: 5, T: 3}));
  const size = {focusHeight: 400, gridWidth: 300, gridHeight: 300};
  const figs = kindFigures(d, "cross", 2, look, size);
  assert.deepEqual(figs.focus.data[0].y, ["o0", "o1"]);
  assert.equal(figs.focus.data[0].x.length, 5);
  assert.equal(figs.grid.data[0].hoverinfo, "skip");
  assert.match(kindFigures(d, "cross", 0, look, size).focus.layout.annotations[0].text, /^Nothing written yet/);
  const hidden = kindFigures(d, "cross", 1, {...look, hideSpecials: true}, size);
  assert.equal(hidden.focus.data[0].x.length, 4); // </s> hidden
  const grid = gridFigure({L: 1, H: 1, Q: 2, K: 2, data: new Float32Array(4)}, look, 0, "t", 300, 300);
  assert.ok(grid.layout.height >= 110);
});

test("the source's attention is worked out once, whatever step is shown", () => {
  const d = new Decoding(payload({S: 5, T: 3, L: 2, H: 2}));
  const size = {focusHeight: 400, gridWidth: 300, gridHeight: 300};
  const at = (shown, kind) => kindFigures(d, kind, shown, look, size).grid.data[0].z;
  assert.equal(at(1, "encoder"), at(3, "encoder")); // the same tiles: plotly has nothing new to draw
  assert.notEqual(at(1, "cross"), at(3, "cross"));
});
