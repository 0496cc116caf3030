// The decoder's lens: layers down, steps across; a cell's colour is the probability that layer's state gives the
// token written, its text the token that layer would write, its hover the top few; the layer where the written
// token settles is outlined, and the shown step's column.

import {STYLE} from "../assets/style.mjs";
import {axisLabels, escapeToken} from "../assets/labels.mjs";
import {outline} from "../assets/plot.mjs";

/** The lens figure, wider than `room` (px) when its steps need it: its container then scrolls sideways. */
export function lensFigure(decoding, lens, shown, room = 0) {
  const T = Math.min(lens.top.length, decoding.steps.length), L = lens.layers; // after Back, the steps it has
  const z = [], text = [], hover = [];
  for (let l = 0; l < L; l++) {
    z.push(lens.written.slice(0, T).map((row) => row[l]));
    text.push(lens.top.slice(0, T).map((row) => escapeToken(row[l][0][0])));
    hover.push(lens.top.slice(0, T).map((row) => row[l].map(([t, p]) => `${escapeToken(t)} ${p.toFixed(3)}`).join("<br>")));
  }
  const xs = axisLabels(decoding.out.labels.slice(0, T)).map((t, i) => `${i + 1}: ${t}`);
  const shapes = lens.settled.slice(0, T)
    .map((s, t) => (s === null ? null : outline(t - 0.5, t + 0.5, s - 1.5, s - 0.5, STYLE.focusLine, 2)))
    .filter(Boolean);
  if (shown) shapes.push(outline(shown - 1.5, shown - 0.5, -0.5, L - 0.5, STYLE.highlight, 2));
  const need = 44 * T + 130;
  return {data: [{type: "heatmap", z, text, customdata: hover, texttemplate: "%{text}", textfont: {size: 10}, x: xs,
    y: [...Array(L).keys()].map((l) => `layer ${l + 1}`), zmin: 0, zmax: 1, colorscale: STYLE.colorscale,
    colorbar: {thickness: 10, title: {text: "p(written)"}},
    hovertemplate: "step %{x}, after %{y}<br>p(written) = %{z:.3f}<br>top:<br>%{customdata}<extra></extra>"}],
  layout: {title: {text: "The decoder's lens: what each layer would write<br>(outlined: where the written token settles)",
    font: {size: 12}, x: 0, xanchor: "left"}, height: Math.max(170, 30 * L + 140), margin: {l: 60, r: 10, t: 50, b: 90},
  ...(need > room ? {width: need} : {}), xaxis: {type: "category", tickangle: -45},
  yaxis: {type: "category", autorange: "reversed"}, shapes, plot_bgcolor: "white"}};
}
