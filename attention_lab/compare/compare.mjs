// The decoding before a what-if, ablation or edit, beside this one: the cross-attention of each (the focused head,
// attention weights whatever the reading), the changed step outlined in both.

import {onVisible, root, shown} from "../assets/dom.mjs";
import {STYLE} from "../assets/style.mjs";
import {axisLabels, labelPx} from "../assets/labels.mjs";
import {colourAxis, draw, emptyFigure, outline, rounded} from "../assets/plot.mjs";
import {page, watch} from "../assets/store.mjs";
import {head, units, weights} from "../assets/units.mjs";
import {ROW_PX} from "../core/figures.mjs";

const MAX_ROWS = 40;

export function compareFigure(decoding, look) {
  const before = decoding.before();
  if (!before || !decoding.steps.length) return null;
  const plain = {...look, reading: "weights"};
  const left = weights(before, "cross", before.steps.length, plain);
  const right = weights(decoding, "cross", decoding.steps.length, plain);
  const outputUnits = units(decoding.out, decoding.steps.length, look.words);
  const at = Math.max(0, outputUnits.groups.findIndex((g) => g.includes(decoding.original.at - 1)));
  const xs = axisLabels(left.cols.labels);
  const data = [], shapes = [];
  [[left, "original"], [right, "what-if"]].forEach(([side, label], i) => {
    const suffix = i === 0 ? "" : "2";
    const chosen = head(side.stack, look.focus, false);
    data.push({type: "heatmap", z: rounded(chosen.z, chosen.Q, chosen.K), x: xs,
      y: axisLabels(side.rows.labels).map((t, n) => `${label} ${n + 1}: ${t}`), xaxis: `x${suffix}`, yaxis: `y${suffix}`,
      coloraxis: "coloraxis", hovertemplate: "%{y} → %{x}<br>weight: %{z:.3f}<extra></extra>"});
    shapes.push({...outline(-0.5, xs.length - 0.5, at - 0.5, at + 0.5, STYLE.highlight, 2), xref: `x${suffix}`, yref: `y${suffix}`});
  });
  const category = {type: "category", side: "top", tickangle: -45};
  const rows = {type: "category", autorange: "reversed", tickfont: {size: 10}};
  const side = Math.min(labelPx([...data[0].y, ...data[1].y], 6), 180);
  const top = Math.min(labelPx(xs, 4.6), 110) + 30;
  const n = Math.min(Math.max(data[0].y.length, data[1].y.length), MAX_ROWS);
  return {data, layout: {height: ROW_PX * n + top + 20, margin: {l: side, r: 10, t: top, b: 10},
    coloraxis: colourAxis({scale: "linear", reading: "weights", hideSpecials: false}),
    xaxis: {...category, domain: [0, 0.4]}, xaxis2: {...category, domain: [0.6, 1], anchor: "y2"},
    yaxis: rows, yaxis2: {...rows, anchor: "x2"}, shapes, plot_bgcolor: "white"}};
}

export function mount({element}) {
  const box = root(element);
  const redraw = () => {
    if (!shown(box)) return;
    const fig = page.decoding && compareFigure(page.decoding, page.look);
    draw(box, fig || emptyFigure("Nothing to compare yet: a what-if, an ablation or an edit makes a decoding to compare with."));
  };
  watch((what) => (what === "decoding" || what === "look" ? redraw() : null));
  onVisible(box, redraw);
  redraw();
}
