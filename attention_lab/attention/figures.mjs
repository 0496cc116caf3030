// One kind of attention at the shown step, as two figures: the focused head large, with its tokens on the axes (or
// the mean of all heads, or a layer of the rollout), and every head of every layer as small multiples tiled into one
// heatmap trace (layers down, heads across). The current step's row is outlined in both.

import {STYLE} from "../assets/look.mjs";
import {page} from "../assets/store.mjs";
import {axisLabels, labelPx} from "../assets/labels.mjs";
import {colourAxis, emptyFigure, outline, rounded, spikes} from "../assets/plot.mjs";
import {head, scaled, weights} from "../assets/units.mjs";

export const ROW_PX = 18; // a token row of a figure whose height is not set by the screen (Compare)
export const MIN_ROW_PX = 12; // fewer pixels than this a row, and the focused head pans instead
const MAX_ROW_PX = 30; // a short output's rows grow to this, to fill the screen a little more
const plain = {showgrid: false, zeroline: false};

/** Every head (L, H) tiled into one array with null gaps between them, in the colour scale. */
export function tiles(stack, scale) {
  const {L, H, Q, K, data} = stack;
  const gapQ = Math.max(1, Math.round(0.12 * Q)), gapK = Math.max(1, Math.round(0.12 * K));
  const rows = L * (Q + gapQ) - gapQ, cols = H * (K + gapK) - gapK;
  const z = [];
  for (let r = 0; r < rows; r++) z.push(new Array(cols).fill(null));
  for (let l = 0; l < L; l++) {
    for (let h = 0; h < H; h++) {
      const top = l * (Q + gapQ), left = h * (K + gapK);
      const block = scaled(data.subarray((l * H + h) * Q * K, (l * H + h + 1) * Q * K), Q, K, scale);
      for (let q = 0; q < Q; q++) for (let k = 0; k < K; k++) z[top + q][left + k] = Math.round(block[q * K + k] * 1000) / 1000;
    }
  }
  const ticksX = [...Array(H).keys()].map((h) => h * (K + gapK) + (K - 1) / 2);
  const ticksY = [...Array(L).keys()].map((l) => l * (Q + gapQ) + (Q - 1) / 2);
  return {z, ticksX, ticksY, rows, cols, gapQ, gapK};
}

/** The outlines of the current row in every tile (one path: plotly draws a shape at a time, and a model of 12 layers
 * and 16 heads would have 192) and of the focused head's tile. */
export function tileShapes(stack, t, row, focus) {
  const {L, H, Q, K} = stack;
  const shapes = [];
  if (row !== null && row >= 0 && row < Q) {
    let path = "";
    for (let l = 0; l < L; l++) {
      for (let h = 0; h < H; h++) {
        const top = l * (Q + t.gapQ) + row, left = h * (K + t.gapK);
        path += `M${left - 0.5},${top - 0.5}H${left + K - 0.5}V${top + 0.5}H${left - 0.5}Z`;
      }
    }
    shapes.push({type: "path", path, line: {color: STYLE.highlight, width: 1}});
  }
  if (focus && focus[0] < L && focus[1] < H) {
    const top = focus[0] * (Q + t.gapQ), left = focus[1] * (K + t.gapK);
    shapes.push(outline(left - 0.5, left + K - 0.5, top - 0.5, top + Q - 0.5, STYLE.focusLine, 2.5));
  }
  return shapes;
}

/** The focused head, `height` pixels tall: its rows pan around the current one when they do not fit. */
export function focusFigure(focused, look, title, row, axes, height) {
  const {Q, K} = focused;
  const ys = axisLabels(focused.rows), xs = axisLabels(focused.cols);
  const top = Math.min(labelPx(xs, 4.6), 110) + 34, bottom = 12;
  const rowPx = Math.min(MAX_ROW_PX, Math.max(MIN_ROW_PX, (height - top - bottom) / Q));
  const room = Math.max(1, Math.floor((height - top - bottom) / rowPx));
  const custom = [];
  for (let q = 0; q < Q; q++) custom.push(Array.from(focused.z.subarray(q * K, (q + 1) * K), (v) => Math.round(v * 10000) / 10000));
  const trace = {type: "heatmap", z: rounded(scaled(focused.z, Q, K, look.scale), Q, K), customdata: custom, x: xs, y: ys,
    coloraxis: "coloraxis", hovertemplate: `${axes[0]}: %{y}<br>${axes[1]}: %{x}<br>weight: %{customdata:.3f}<extra></extra>`};
  let rows = {type: "category", autorange: "reversed", tickfont: {size: 11}};
  if (Q > room) {
    const first = row === null ? 0 : Math.min(Math.max(0, row - Math.floor(room / 2)), Q - room);
    rows = {...rows, autorange: false, range: [first + room - 0.5, first - 0.5]};
  }
  const fits = Math.ceil(Math.min(Q, room) * rowPx) + top + bottom; // no taller than its rows need
  const shapes = row !== null && row >= 0 && row < Q ? [outline(-0.5, K - 0.5, row - 0.5, row + 0.5, STYLE.highlight, 2)] : [];
  return {data: [trace], layout: {
    title: {text: title, font: {size: 12}, x: 0, xanchor: "left", y: 1, yanchor: "top", pad: {t: 6, l: 4}},
    height: Math.max(200, Math.min(height, fits)), margin: {l: Math.min(labelPx(ys), 140) + 10, r: 10, t: top, b: bottom},
    coloraxis: colourAxis(look), plot_bgcolor: "white", dragmode: "pan", hovermode: "closest",
    xaxis: {type: "category", side: "top", tickangle: -45, ...spikes()}, yaxis: {...rows, ...spikes()},
    shapes, modebar: {orientation: "v"}}};
}

/** Every head tiled, at most `width` × `height` pixels; no hover (a click on a tile is read from its position). */
export function gridFigure(stack, look, row, title, width, height, grid) {
  const t = grid || tiles(stack, look.scale);
  const cell = Math.max(1, Math.min(22, (width - 80) / t.cols, (height - 50) / t.rows));
  return {data: [{type: "heatmap", z: t.z, coloraxis: "coloraxis", hoverinfo: "skip"}], layout: {
    title: {text: title, font: {size: 12}, x: 0, xanchor: "left", y: 1, yanchor: "top", pad: {t: 6, l: 4}},
    height: Math.max(110, Math.ceil(cell * t.rows) + 50), margin: {l: 60, r: 10, t: 44, b: 6},
    coloraxis: {...colourAxis(look), showscale: false}, plot_bgcolor: "white", dragmode: false,
    xaxis: {...plain, tickvals: t.ticksX, ticktext: t.ticksX.map((_, h) => `h${h + 1}`), side: "top", fixedrange: true},
    yaxis: {...plain, tickvals: t.ticksY, ticktext: t.ticksY.map((_, l) => `layer ${l + 1}`), autorange: "reversed",
      fixedrange: true},
    shapes: tileShapes(stack, t, row, look.focus)}};
}

/** The layer and head (0-based) of the grid's tile nearest a click at `x`, `y` (pixels in the figure), or null. */
export function tileAt(gd, x, y) {
  const full = gd._fullLayout, ticks = gd.layout && gd.layout.yaxis && gd.layout.yaxis.tickvals;
  if (!full || !ticks) return null;
  const xa = full.xaxis, ya = full.yaxis, px = x - xa._offset, py = y - ya._offset;
  if (px < 0 || px > xa._length || py < 0 || py > ya._length) return null;
  const nearest = (values, v) => values.reduce((best, t, i) => (Math.abs(t - v) < Math.abs(values[best] - v) ? i : best), 0);
  return [nearest(ticks, ya.p2l(py)), nearest(gd.layout.xaxis.tickvals, xa.p2l(px))];
}

/** One kind of attention at step `shown` as the look asks: {focus, grid} figures, or why there are none. */
export function kindFigures(decoding, kind, shown, look, size) {
  const empty = (text) => ({focus: emptyFigure(text, 200), grid: null});
  if (kind !== "encoder" && !shown) return empty("Nothing written yet: Step or Run to decode.");
  const w = weights(decoding, kind, shown, look);
  if (!w.rows.labels.length || !w.cols.labels.length) {
    return empty("Only special tokens here; untick “Hide special tokens” to see them.");
  }
  const rolled = look.reading === "rollout" && kind !== "cross";
  const chosen = head(w.stack, look.focus, rolled);
  const {kinds, readings} = page.names;
  const reading = look.reading !== "weights" ? ` · ${readings[look.reading]}` : "";
  const focused = {...chosen, rows: w.rows.labels, cols: w.cols.labels};
  const focus = focusFigure(focused, look, `${kinds[kind].title}${reading}: ${chosen.name}`, w.current,
    kinds[kind].axes, size.focusHeight);
  const overview = rolled ? "Rollout through each layer (heads averaged)" : "Every head (layers down)";
  // tiled once per weights and scale: the source's attention, the same at every step, only once
  const grid = decoding.remembered(`tiles:${kind}`, `${w.key}|${look.scale}`, () => tiles(w.stack, look.scale));
  return {focus, grid: gridFigure(w.stack, look, w.current, `${overview}: click one to focus it`, size.gridWidth,
    size.gridHeight, grid)};
}
