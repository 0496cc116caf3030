// Every head of every layer as small multiples (layers down, heads across), painted on a canvas: one pixel per
// weight, drawn larger without smoothing, as plotly draws a heatmap with zsmooth "fast". The current step's row is
// outlined in every tile and the focused head's tile framed. A canvas because this overview has no hover, no pan and
// no axes to measure: a plotly figure of it took 15-20 ms to draw at each Step, the canvas well under one. A click
// is read from the tile under it (tileAt).

import {STYLE} from "../assets/style.mjs";

const MAX_CELL_PX = 22;

/** Every head (L, H, Q, K) in the colour scale's values (`scaled(head)` gives a head's), tiled into one array of
 * `rows` × `cols` cells with gaps (NaN) between the heads. */
export function tiles(stack, scaled) {
  const {L, H, Q, K, data} = stack;
  const gapQ = Math.max(1, Math.round(0.12 * Q)), gapK = Math.max(1, Math.round(0.12 * K));
  const rows = L * (Q + gapQ) - gapQ, cols = H * (K + gapK) - gapK;
  const values = new Float32Array(rows * cols).fill(NaN);
  for (let lh = 0; lh < L * H; lh++) {
    const top = Math.floor(lh / H) * (Q + gapQ), left = (lh % H) * (K + gapK);
    const block = scaled(data.subarray(lh * Q * K, (lh + 1) * Q * K));
    for (let q = 0; q < Q; q++) values.set(block.subarray(q * K, (q + 1) * K), (top + q) * cols + left);
  }
  return {L, H, Q, K, gapQ, gapK, rows, cols, values};
}

/** Where the tiles go in a box `width` wide and at most `height` tall (CSS pixels), names in `fontPx` type: the
 * margins (room for the layers' names at the left, the heads' above), the cells' size and the box's. */
export function layout(t, width, height, fontPx = 12) {
  const margin = {l: Math.round(5 * fontPx), r: 10, t: fontPx + 10, b: 6};
  const cellH = Math.max(1, Math.min(MAX_CELL_PX, (width - 80) / t.cols, (height - 50) / t.rows));
  const cellW = Math.max(1, (width - margin.l - margin.r) / t.cols); // the tiles fill the width, as a figure would
  return {...margin, cellW, cellH, width, height: Math.max(60, Math.ceil(cellH * t.rows) + margin.t + margin.b)};
}

/** The outlines to draw, in cells: the row `row` of every tile and the focused head's tile, [left, top, w, h]. */
export function outlines(t, row, focus) {
  const {L, H, Q, K, gapQ, gapK} = t;
  const rows = [];
  if (row !== null && row >= 0 && row < Q) {
    for (let l = 0; l < L; l++) for (let h = 0; h < H; h++) rows.push([h * (K + gapK), l * (Q + gapQ) + row, K, 1]);
  }
  const framed = focus && focus[0] < L && focus[1] < H ? [focus[1] * (K + gapK), focus[0] * (Q + gapQ), K, Q] : null;
  return {rows, framed};
}

/** A colour scale ([[0, "#rrggbb"], ..., [1, "#rrggbb"]]) as 256 colours, interpolated in RGB as plotly does. */
export function palette(colorscale) {
  const stops = colorscale.map(([at, hex]) => [at, [1, 3, 5].map((i) => parseInt(hex.slice(i, i + 2), 16))]);
  const out = new Uint8ClampedArray(256 * 3);
  for (let i = 0; i < 256; i++) {
    const x = i / 255;
    let s = 1;
    while (s < stops.length - 1 && stops[s][0] < x) s++;
    const [a, ca] = stops[s - 1], [b, cb] = stops[s];
    const f = b > a ? Math.min(1, Math.max(0, (x - a) / (b - a))) : 0;
    for (let c = 0; c < 3; c++) out[3 * i + c] = Math.round(ca[c] + f * (cb[c] - ca[c]));
  }
  return out;
}

const COLOURS = palette(STYLE.colorscale);

/** Where the colour of `value` on a scale from `low` to `high` starts in a palette (its red; green and blue follow). */
export function colourAt(value, low, high) {
  return 3 * Math.round(255 * Math.min(1, Math.max(0, (value - low) / (high - low || 1))));
}

/** The tiles' cells as RGBA, one pixel each: a value's colour between `low` and `high`, gaps see-through. */
export function pixels(t, low, high) {
  const out = new Uint8ClampedArray(t.rows * t.cols * 4);
  for (let i = 0; i < t.values.length; i++) {
    const v = t.values[i];
    if (Number.isNaN(v)) continue;
    const c = colourAt(v, low, high);
    out.set([COLOURS[c], COLOURS[c + 1], COLOURS[c + 2], 255], 4 * i);
  }
  return out;
}

/** Paint `grid` ({tiles, row, focus, title, range: [low, high]}) into `box`, `width` × at most `height` CSS pixels,
 * its names in `fontPx` type. The canvas (made once) keeps where it put the tiles, for tileAt. */
export function paint(box, grid, width, height, fontPx = 12) {
  let title = box.querySelector(":scope > .tiles-title"), canvas = box.querySelector(":scope > canvas.tiles");
  if (!canvas) {
    title = Object.assign(document.createElement("div"), {className: "tiles-title"});
    canvas = Object.assign(document.createElement("canvas"), {className: "tiles"});
    canvas.setAttribute("role", "img");
    box.replaceChildren(title, canvas);
  }
  const t = grid.tiles, at = layout(t, width, height, fontPx), ratio = globalThis.devicePixelRatio || 1;
  title.textContent = grid.title;
  canvas.setAttribute("aria-label", `${grid.title}: ${t.L} layers of ${t.H} heads`);
  canvas.style.setProperty("--width", `${at.width}px`); // its size on the page (views.css)
  canvas.style.setProperty("--height", `${at.height}px`);
  const [w, h] = [Math.round(at.width * ratio), Math.round(at.height * ratio)];
  if (canvas.width !== w || canvas.height !== h) [canvas.width, canvas.height] = [w, h]; // (a new size clears it)
  Object.assign(canvas.dataset, {layers: t.L, heads: t.H, row: grid.row ?? "", focus: grid.focus ? grid.focus.join(",") : ""});
  canvas.geometry = {...at, tiles: t};

  const cells = (canvas.cells ??= document.createElement("canvas")); // a pixel a cell, drawn larger below
  if (cells.width !== t.cols || cells.height !== t.rows) [cells.width, cells.height] = [t.cols, t.rows];
  cells.getContext("2d").putImageData(new ImageData(pixels(t, ...grid.range), t.cols, t.rows), 0, 0);
  const ctx = canvas.getContext("2d");
  ctx.setTransform(ratio, 0, 0, ratio, 0, 0);
  ctx.fillStyle = "white";
  ctx.fillRect(0, 0, at.width, at.height);
  ctx.imageSmoothingEnabled = false;
  ctx.drawImage(cells, at.l, at.t, t.cols * at.cellW, t.rows * at.cellH);

  const box_ = ([x, y, w, h]) => [at.l + x * at.cellW, at.t + y * at.cellH, w * at.cellW, h * at.cellH];
  const {rows, framed} = outlines(t, grid.row, grid.focus);
  ctx.strokeStyle = STYLE.highlight;
  ctx.lineWidth = 1;
  for (const r of rows) ctx.strokeRect(...box_(r));
  if (framed) {
    ctx.strokeStyle = STYLE.focusLine;
    ctx.lineWidth = 2.5;
    ctx.strokeRect(...box_(framed));
  }
  ctx.fillStyle = "#444";
  ctx.font = `${fontPx}px sans-serif`;
  ctx.textAlign = "center";
  ctx.textBaseline = "bottom";
  for (let h = 0; h < t.H; h++) ctx.fillText(`h${h + 1}`, at.l + (h * (t.K + t.gapK) + t.K / 2) * at.cellW, at.t - 4);
  ctx.textAlign = "right";
  ctx.textBaseline = "middle";
  for (let l = 0; l < t.L; l++) ctx.fillText(`layer ${l + 1}`, at.l - 6, at.t + (l * (t.Q + t.gapQ) + t.Q / 2) * at.cellH);
  return canvas;
}

/** The layer and head (0-based) of the tile nearest a point `x`, `y` (CSS pixels in the canvas), or null outside
 * the tiles. */
export function tileAt(canvas, x, y) {
  const g = canvas && canvas.geometry;
  if (!g) return null;
  const cx = (x - g.l) / g.cellW, cy = (y - g.t) / g.cellH, t = g.tiles;
  if (cx < 0 || cy < 0 || cx > t.cols || cy > t.rows) return null;
  const near = (c, size, gap, n) => Math.min(n - 1, Math.max(0, Math.floor((c + gap / 2) / (size + gap))));
  return [near(cy, t.Q, t.gapQ, t.L), near(cx, t.K, t.gapK, t.H)];
}

/** The centre of a head's tile (0-based layer and head), in CSS pixels of the canvas: where a click focuses it. */
export function tileCentre(canvas, layer, head) {
  const g = canvas.geometry, t = g.tiles;
  return [g.l + (head * (t.K + t.gapK) + t.K / 2) * g.cellW, g.t + (layer * (t.Q + t.gapQ) + t.Q / 2) * g.cellH];
}
