// Every head of every kind summarised (attention_lab/core/grids.py): one row of grids per measure (layers down,
// heads across, a block per kind), each cell's value written in it and coloured as the measure says. A click on a
// cell focuses that head in the Attention tab and opens it on that kind. The Heads tab's summary of this sentence
// (heads/summary.mjs) and the survey over a corpus (survey/corpus.mjs, survey/report.mjs) are drawn by it.

import {el, openAttentionTab, root} from "../assets/dom.mjs";
import {STYLE, focusLabel, focusOf} from "../assets/style.mjs";
import {escapeToken, wrapped} from "../assets/labels.mjs";
import {draw, emptyFigure, onClick} from "../assets/plot.mjs";
import {slowView} from "../assets/slow.mjs";
import {setKind, setLook} from "../assets/store.mjs";

/** A value as its cell writes it: a share in percent, a size or a signed size with as many digits as it needs. */
export function short(value, colouring) {
  if (colouring === "share") return `${Math.round(100 * value)}%`;
  const sign = colouring === "signed" && value > 0 ? "+" : value < 0 ? "-" : "";
  const size = Math.abs(value);
  if (size === 0) return "0";
  if (size < 0.001) return sign + size.toExponential(1); // a head that barely matters still shows its size
  if (size < 0.1) return sign + size.toFixed(3);
  return sign + (size < 10 ? size.toFixed(2) : size.toFixed(0));
}

function metricTrace(data, metric, yaxis, written) {
  const {kinds, layers, heads} = data;
  const width = kinds.length * (heads + 1) - 1;
  const z = [], text = [], where = [];
  for (let l = 0; l < layers; l++) {
    z.push(new Array(width).fill(null));
    text.push(new Array(width).fill(""));
    where.push(new Array(width).fill(null));
  }
  let top = 0;
  kinds.forEach((kind, b) => {
    const grid = metric.grids[kind];
    grid.forEach((row, l) => row.forEach((value, h) => {
      if (value === null) return;
      const x = b * (heads + 1) + h;
      z[l][x] = value;
      text[l][x] = short(value, metric.colouring);
      where[l][x] = `${kind}|${focusLabel(l, h)}`;
      top = Math.max(top, Math.abs(value));
    }));
  });
  if (metric.colouring === "share" || top === 0) top = metric.colouring === "share" ? 1 : 1e-9;
  const signed = metric.colouring === "signed";
  return {type: "heatmap", z, text, texttemplate: written ? "%{text}" : "", textfont: {size: 10}, customdata: where,
    colorscale: signed ? [[0, "#2166ac"], [0.5, "#f7f7f7"], [1, "#b2182b"]] : STYLE.colorscale,
    zmin: signed ? -top : 0, zmax: top, showscale: false, xaxis: "x", yaxis, xgap: 1, ygap: 1,
    hovertemplate: `%{customdata}<br>${escapeToken(metric.name)}: %{z:.3f}<extra></extra>`};
}

const CELL_PX = 30; // a layer's row
const TEXT_CELL_PX = 34; // the narrowest cell its value is written in (narrower: the value is in the hover)
const CHAR_PX = 6.2, LINE_PX = 14, GAP_PX = 14; // a note's characters (11 px type), lines, and the space after a grid

/** The summary as one figure `width` pixels wide: a row of grids per measure, its name and meaning above it,
 * wrapped to the width (plotly cuts text at the figure's edge), each kind's name above its block of heads. */
export function summaryFigure(data, width = 720) {
  const {kinds, layers, heads, metrics} = data;
  const margin = {l: 40, r: 10, b: 10};
  const columns = kinds.length * (heads + 1) - 1, inner = Math.max(120, width - margin.l - margin.r);
  const written = inner / columns >= TEXT_CELL_PX;
  const chars = Math.max(16, Math.floor(inner / CHAR_PX));
  const notes = metrics.map((metric) => {
    const lines = wrapped(`${metric.name}: ${metric.note}`, chars), name = escapeToken(metric.name);
    if (lines[0].startsWith(name)) lines[0] = `<b>${name}</b>${lines[0].slice(name.length)}`;
    return lines;
  });
  const rowPx = layers * CELL_PX;
  const total = notes.reduce((sum, lines) => sum + lines.length * LINE_PX + 4 + rowPx + GAP_PX, 0);
  const traces = [], layout = {}, annotations = [];
  let below = 0; // pixels from the top of the grids' area
  metrics.forEach((metric, i) => {
    const suffix = i === 0 ? "" : String(i + 1);
    traces.push(metricTrace(data, metric, `y${suffix}`, written));
    below += notes[i].length * LINE_PX + 4;
    const top = 1 - below / total;
    below += rowPx;
    layout[`yaxis${suffix}`] = {domain: [1 - below / total, top], tickvals: [...Array(layers).keys()],
      ticktext: [...Array(layers).keys()].map((l) => `L${l + 1}`), autorange: "reversed", showgrid: false,
      zeroline: false, anchor: "x", fixedrange: true};
    annotations.push({text: notes[i].join("<br>"), xref: "paper", yref: "paper", x: 0, y: top, yanchor: "bottom",
      xanchor: "left", align: "left", showarrow: false, font: {size: 11}});
    below += GAP_PX;
  });
  kinds.forEach((kind, b) => annotations.push({text: escapeToken(data.short[kind]), xref: "x", yref: "paper",
    x: b * (heads + 1) + (heads - 1) / 2, y: 1, yanchor: "bottom", yshift: 22, showarrow: false, font: {size: 12}}));
  const ticks = [...Array(kinds.length * (heads + 1)).keys()].filter((x) => x % (heads + 1) < heads);
  // The title is an annotation: plotly places a title of several lines badly (over the figure's top or over what
  // lies under it), an annotation of several lines by its box.
  const title = wrapped(data.title, Math.floor(inner / 7));
  annotations.push({name: "title", text: title.join("<br>"), xref: "paper", yref: "paper", x: 0, xshift: 4 - margin.l,
    y: 1, yshift: 42, xanchor: "left", yanchor: "bottom", align: "left", showarrow: false, font: {size: 12}});
  margin.t = title.length * 15 + 52;
  return {data: traces, layout: {...layout, height: total + margin.t + margin.b, margin,
    plot_bgcolor: "white", annotations, hovermode: "closest", dragmode: false,
    xaxis: {tickvals: ticks, ticktext: ticks.map((x) => `h${(x % (heads + 1)) + 1}`), side: "top", anchor: "free",
      position: 1, showgrid: false, zeroline: false, range: [-0.5, columns - 0.5], fixedrange: true}}};
}

/** Focus the head of a clicked cell ("kind|Layer l · Head h") and open the Attention tab on its kind. */
export function focusCell(where) {
  const [kind, label] = String(where || "").split("|");
  const focus = focusOf(label);
  if (!focus) return;
  setKind(kind);
  setLook({focus});
  openAttentionTab();
}

/** Draw a summary (`message`, or what the placeholder `computing` or a message with none says) into `box`. */
export function drawSummary(box, {message, computing}) {
  if (computing || !message || message.op !== "summary") {
    draw(box, emptyFigure(computing || (message && message.text) || "Run or Step to decode.", 120));
    return;
  }
  onClick(draw(box, summaryFigure(message, box.clientWidth || undefined)), (point) => focusCell(point.customdata));
}

/** How a component showing a summary under `label` mounts (this sentence's, the corpus's), drawn when it is on
 * screen, and again when it comes into view; `here`: the tab whose summary the page may make (assets/here.mjs). */
export function summaryView(label, here = null) {
  return (component) => {
    const box = root(component.element);
    const figure = el("div", "summary-figure");
    box.replaceChildren(el("div", "lab-label", label), figure);
    let drew = null; // what was drawn: the same grid again (a survey's, handed over at each Step) is not redrawn
    slowView(component, figure, (view) => {
      const drawing = [view.message?.metrics ?? view.message, view.computing, figure.clientWidth];
      if (drew && drawing.every((v, i) => v === drew[i])) return;
      drew = drawing;
      drawSummary(figure, view);
    }, {on: () => false, here});
  };
}
