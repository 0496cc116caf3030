// One kind of attention at the shown step, as two figures: the focused head large, a plotly heatmap with its tokens
// on the axes (or the mean of all heads, or a layer of the rollout), and every head of every layer as small multiples
// (tiles.mjs paints them). The current step's row is outlined in both.

import {STYLE} from "../assets/style.mjs";
import {page} from "../assets/store.mjs";
import {axisLabels, labelPx} from "../assets/labels.mjs";
import {colourAxis, emptyFigure, outline, rounded, spikes} from "../assets/plot.mjs";
import {tiles} from "./tiles.mjs";
import {head, scaled, weights} from "../assets/units.mjs";

export const ROW_PX = 18; // a token row of a figure whose height is not set by the screen (Compare)
export const MIN_ROW_PX = 12; // fewer pixels than this a row, and the focused head pans instead
const MAX_ROW_PX = 30; // a short output's rows grow to this, to fill the screen a little more

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
    coloraxis: {...colourAxis(look), showscale: false}, plot_bgcolor: "white", dragmode: "pan", hovermode: "closest",
    // no grid lines: the cells cover them (plotly would draw them at every Step all the same)
    xaxis: {type: "category", side: "top", tickangle: -45, showgrid: false, zeroline: false, ...spikes()},
    yaxis: {...rows, showgrid: false, zeroline: false, ...spikes()},
    shapes, modebar: {orientation: "v"}}};
}

/** One kind of attention at step `shown` as the look asks: {focus, grid}, the focused head's figure (its colour bar
 * is the page's legend: plot.mjs) and what tiles.mjs paints, or why there are none. */
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
  const {Q, K} = w.stack;
  const tiled = decoding.remembered(`tiles:${kind}`, `${w.key}|${look.scale}`,
    () => tiles(w.stack, (z) => scaled(z, Q, K, look.scale)));
  const {cmin, cmax} = colourAxis(look);
  return {focus, grid: {tiles: tiled, row: w.current, focus: look.focus, range: [cmin, cmax],
    title: `${overview}: click one to focus it`}};
}
