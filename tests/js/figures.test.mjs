import assert from "node:assert/strict";
import {test} from "node:test";

import {Decoding} from "../../attention_lab/assets/decoding.mjs";
import {focusFigure, kindFigures, MIN_ROW_PX} from "../../attention_lab/core/figures.mjs";
import {layout, outlines, palette, pixels, tileAt, tileCentre, tiles} from "../../attention_lab/core/tiles.mjs";
import {setNames} from "../../attention_lab/assets/store.mjs";
import {NAMES, payload} from "./helpers.mjs";

setNames(NAMES);

const look = {words: true, hideSpecials: false, scale: "linear", focus: null, reading: "weights"};

test("every head is tiled into one array with gaps between the heads, in the colour scale", () => {
  const L = 2, H = 3, Q = 3, K = 9;
  const stack = {L, H, Q, K, data: Float32Array.from({length: L * H * Q * K}, (_, i) => (i % 7) / 7)};
  const t = tiles(stack, (z) => z.map((v) => 2 * v));
  assert.deepEqual([t.gapQ, t.gapK], [1, 1]); // round(0.12 * 3), round(0.12 * 9): at least 1
  assert.deepEqual([t.rows, t.cols], [L * (Q + 1) - 1, H * (K + 1) - 1]);
  const at = (r, c) => t.values[r * t.cols + c];
  assert.ok(Number.isNaN(at(Q, 0)) && Number.isNaN(at(0, K))); // the gaps
  // layer 2, head 3, row 1, column 4 is where that weight is, scaled
  const [l, h, q, k] = [1, 2, 1, 4];
  assert.equal(at(l * (Q + 1) + q, h * (K + 1) + k), 2 * stack.data[((l * H + h) * Q + q) * K + k]);
  const bigger = tiles({L: 1, H: 1, Q: 20, K: 20, data: new Float32Array(400)}, (z) => z);
  assert.equal(bigger.gapQ, 2); // bigger tiles, bigger gaps
});

test("the current row is outlined in every tile, and the focused head's tile framed", () => {
  const t = tiles({L: 2, H: 2, Q: 3, K: 4, data: new Float32Array(48)}, (z) => z);
  const {rows, framed} = outlines(t, 1, [1, 0]);
  assert.equal(rows.length, 4);
  assert.deepEqual(rows[3], [4 + t.gapK, 3 + t.gapQ + 1, 4, 1]); // layer 2, head 2, its row 1
  assert.deepEqual(framed, [0, 3 + t.gapQ, 4, 3]);
  assert.deepEqual(outlines(t, null, null), {rows: [], framed: null});
  assert.equal(outlines(t, 5, [2, 0]).framed, null); // no such row, no such head
});

test("a click is read as the tile under it, and a tile's centre is read back as that tile", () => {
  const t = tiles({L: 3, H: 4, Q: 5, K: 7, data: new Float32Array(420)}, (z) => z);
  const canvas = {geometry: {...layout(t, 400, 300), tiles: t}};
  for (let l = 0; l < 3; l++) for (let h = 0; h < 4; h++) assert.deepEqual(tileAt(canvas, ...tileCentre(canvas, l, h)), [l, h]);
  assert.equal(tileAt(canvas, 1, 1), null); // in the margin
  const g = canvas.geometry;
  assert.ok(g.height <= 300 && g.l + t.cols * g.cellW <= 400 - g.r + 1e-9);
});

test("the colours are the scale's at its stops and between them, as plotly's", () => {
  const colours = palette([[0, "#000000"], [0.5, "#ff0000"], [1, "#ffffff"]]);
  const at = (i) => Array.from(colours.slice(3 * i, 3 * i + 3));
  assert.deepEqual([at(0), at(255)], [[0, 0, 0], [255, 255, 255]]);
  assert.deepEqual(at(64), [128, 0, 0]); // a quarter of the way: half of the way to red
  const t = tiles({L: 1, H: 1, Q: 1, K: 2, data: Float32Array.of(0, 1)}, (z) => z);
  assert.deepEqual(Array.from(pixels(t, 0, 1)), [247, 251, 255, 255, 8, 48, 107, 255]); // Blues' ends
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
  assert.deepEqual([figs.grid.row, figs.grid.range], [1, [0, 1]]); // the step's row, the colour scale's ends
  assert.match(kindFigures(d, "cross", 0, look, size).focus.layout.annotations[0].text, /^Nothing written yet/);
  const hidden = kindFigures(d, "cross", 1, {...look, hideSpecials: true}, size);
  assert.equal(hidden.focus.data[0].x.length, 4); // </s> hidden
});

test("the source's attention is worked out once, whatever step is shown", () => {
  const d = new Decoding(payload({S: 5, T: 3, L: 2, H: 2}));
  const size = {focusHeight: 400, gridWidth: 300, gridHeight: 300};
  const at = (shown, kind) => kindFigures(d, kind, shown, look, size).grid.tiles;
  assert.equal(at(1, "encoder"), at(3, "encoder")); // the same tiles, not tiled again
  assert.notEqual(at(1, "cross"), at(3, "cross"));
});
