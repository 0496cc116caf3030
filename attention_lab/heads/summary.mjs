// Every head of every kind summarised: one row of grids per measure (layers down, heads across, a block per kind),
// each cell's value written in it and coloured as the measure says. A click on a cell focuses that head in the
// Attention tab and opens it on that kind. The survey over a corpus (survey/corpus.mjs) is drawn the same way.

import {el, onVisible, root, shown} from "../assets/dom.mjs";
import {STYLE} from "../assets/look.mjs";
import {escapeToken} from "../assets/labels.mjs";
import {draw, emptyFigure} from "../assets/plot.mjs";
import {setKind, setLook} from "../assets/store.mjs";

const CELL_PX = 30;

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

function metricTrace(data, metric, yaxis) {
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
      where[l][x] = `${kind}|Layer ${l + 1} · Head ${h + 1}`;
      top = Math.max(top, Math.abs(value));
    }));
  });
  if (metric.colouring === "share" || top === 0) top = metric.colouring === "share" ? 1 : 1e-9;
  const signed = metric.colouring === "signed";
  return {type: "heatmap", z, text, texttemplate: "%{text}", textfont: {size: 10}, customdata: where,
    colorscale: signed ? [[0, "#2166ac"], [0.5, "#f7f7f7"], [1, "#b2182b"]] : STYLE.colorscale,
    zmin: signed ? -top : 0, zmax: top, showscale: false, xaxis: "x", yaxis, xgap: 1, ygap: 1,
    hovertemplate: `%{customdata}<br>${escapeToken(metric.name)}: %{z:.3f}<extra></extra>`};
}

/** The summary as one figure: a row of grids per measure, its name and meaning above it. */
export function summaryFigure(data) {
  const {kinds, layers, heads, metrics} = data;
  const rowPx = layers * CELL_PX, total = metrics.length * (rowPx + 44);
  const traces = [], layout = {}, notes = [];
  metrics.forEach((metric, i) => {
    const suffix = i === 0 ? "" : String(i + 1);
    traces.push(metricTrace(data, metric, `y${suffix}`));
    const low = 1 - (i * (rowPx + 44) + 30 + rowPx) / total;
    layout[`yaxis${suffix}`] = {domain: [low, low + rowPx / total], tickvals: [...Array(layers).keys()],
      ticktext: [...Array(layers).keys()].map((l) => `L${l + 1}`), autorange: "reversed", showgrid: false,
      zeroline: false, anchor: "x", fixedrange: true};
    notes.push({text: `<b>${escapeToken(metric.name)}</b>: ${escapeToken(metric.note)}`, xref: "paper", yref: "paper",
      x: 0, y: low + rowPx / total, yanchor: "bottom", xanchor: "left", showarrow: false, font: {size: 11}});
  });
  const ticks = kinds.flatMap((kind, b) => [...Array(heads).keys()].map((h) =>
    [b * (heads + 1) + h, h === 0 ? `${data.short[kind]} h1` : `h${h + 1}`]));
  return {data: traces, layout: {...layout, height: total + 90, margin: {l: 40, r: 10, t: 80, b: 10},
    title: {text: escapeToken(data.title), font: {size: 12}, x: 0, xanchor: "left", y: 0.995},
    plot_bgcolor: "white", annotations: notes, hovermode: "closest", dragmode: false,
    xaxis: {tickvals: ticks.map((t) => t[0]), ticktext: ticks.map((t) => t[1]), side: "top", anchor: "free",
      position: 1, showgrid: false, zeroline: false, range: [-0.5, kinds.length * (heads + 1) - 1.5], fixedrange: true}}};
}

/** Focus the head of a clicked cell ("kind|Layer l · Head h") and open the Attention tab on its kind. */
export function focusCell(where) {
  const found = /^(\w+)\|Layer (\d+) · Head (\d+)$/.exec(String(where || ""));
  if (!found) return;
  setKind(found[1]);
  setLook({focus: [Number(found[2]) - 1, Number(found[3]) - 1]});
  document.querySelector("#lab-tabs button[role=tab]")?.click(); // the Attention tab, the first
}

/** Draw a summary (or the text of a placeholder) into `box` when it is on screen, and again when it comes into view. */
export function drawSummary(box, value) {
  if (!shown(box)) return;
  if (!value || value.op !== "summary") {
    draw(box, emptyFigure(value && value.text ? value.text : "Run or Step to decode.", 120));
    return;
  }
  const gd = draw(box, summaryFigure(value));
  if (gd && !gd.__cells) {
    gd.__cells = true;
    gd.on("plotly_click", (event) => focusCell(event.points && event.points[0] && event.points[0].customdata));
  }
}

export function mount({element, props, watch}) {
  const box = root(element);
  box.replaceChildren(el("div", "lab-label", "This sentence"));
  const figure = el("div", "summary-figure");
  box.appendChild(figure);
  const redraw = () => drawSummary(figure, props.value);
  watch("value", redraw);
  onVisible(figure, redraw);
  redraw();
}
