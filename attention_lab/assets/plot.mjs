// plotly.js helpers shared by every view: drawing a figure into a container, an empty figure that says why, and the
// colour axis of the weights. plotly.js is its cartesian bundle (assets/vendor, gradio_api/file=... in the page's head).

import {LOG_FLOOR, STYLE} from "./style.mjs";
import {escapeToken, wrapped} from "./labels.mjs";

const CONFIG = {responsive: true, displaylogo: false};

/** Draw `fig` ({data, layout}) into `container` (its .lab-figure child, made once), replacing what it showed. */
export function draw(container, fig) {
  if (!container || !globalThis.Plotly) return null;
  let gd = container.querySelector(":scope > .lab-figure");
  if (!gd) {
    gd = document.createElement("div");
    gd.className = "lab-figure";
    container.appendChild(gd);
  }
  const layout = fig.message === undefined ? fig.layout
    : {...fig.layout, annotations: [messageAt(fig.message, container)]};
  globalThis.Plotly.react(gd, fig.data, {...layout, autosize: true}, CONFIG);
  if (!fig.data.length) { // nothing drawn, no colours
    container.querySelector(":scope > .colour-legend")?.remove();
    container.classList.remove("with-legend");
  }
  return gd;
}

const clickable = new WeakSet(); // figures whose clicks are taken: a redraw keeps the figure and its listeners

/** Call `fn(point)` with the first point of every click on the figure `gd` (what draw returns; none if null), bound
 * once however often the figure is drawn again. */
export function onClick(gd, fn) {
  if (!gd || clickable.has(gd)) return;
  clickable.add(gd);
  gd.on("plotly_click", (event) => {
    const point = event.points && event.points[0];
    if (point) fn(point);
  });
}

const MESSAGE_CHAR_PX = 7.6; // a character of a message, at 14 px

function messageAt(message, container) {
  const chars = Math.max(16, Math.floor((container.clientWidth || 600) / MESSAGE_CHAR_PX) - 4);
  return {text: wrapped(message, chars).join("<br>"), showarrow: false, font: {size: 14, color: "#555"}};
}

/** A figure with no data that says why (`message`, plain text), wrapped to the width it is drawn at. */
export function emptyFigure(message, height = 160) {
  const hidden = {visible: false};
  return {data: [], message, layout: {height, xaxis: hidden, yaxis: hidden, plot_bgcolor: "white",
    annotations: [{text: escapeToken(message), showarrow: false, font: {size: 14, color: "#555"}}],
    margin: {l: 10, r: 10, t: 10, b: 10}}};
}

export function outline(x0, x1, y0, y1, colour, width) {
  return {type: "rect", x0, x1, y0, y1, line: {color: colour, width}};
}

/** Q × K values as rows of numbers rounded to 3 decimals (what plotly is sent). */
export function rounded(z, Q, K) {
  const rows = [];
  for (let q = 0; q < Q; q++) {
    const row = new Array(K);
    for (let k = 0; k < K; k++) row[k] = Math.round(z[q * K + k] * 1000) / 1000;
    rows.push(row);
  }
  return rows;
}

/** The colour axis of weights in the look's scale and reading, its legend saying what the colour is. */
export function colourAxis(look) {
  const quantity = {value: "value-weighted share", rollout: "rollout share"}[look.reading] || "weight";
  const what = look.hideSpecials ? `renormalised ${quantity}` : quantity;
  let bar = {title: {text: what}}, low = 0, high = 1;
  if (look.scale === "log") {
    const ticks = [-4, -3, -2, -1, 0];
    bar = {title: {text: `${what} (log)`}, tickvals: ticks, ticktext: ["0.0001", "0.001", "0.01", "0.1", "1"]};
    low = Math.log10(LOG_FLOOR);
    high = 0;
  } else if (look.scale === "row") {
    bar = {title: {text: `${what} / row max`}};
  }
  return {colorscale: STYLE.colorscale, cmin: low, cmax: high, colorbar: {...bar, thickness: 12}};
}

/** The colour axis's legend beside a figure `fig` drawn in `container` (the page draws it, not plotly: a colour bar
 * is redrawn with every plotly.react, 10 ms of a Step's), spanning the figure's rows; it changes with the look. */
export function legend(container, fig, look) {
  let box = container.querySelector(":scope > .colour-legend");
  container.classList.toggle("with-legend", fig.data.length > 0); // the figure and its legend side by side
  if (!fig.data.length) {
    box?.remove();
    return;
  }
  if (!box) {
    box = Object.assign(document.createElement("div"), {className: "colour-legend"});
    box.setAttribute("aria-hidden", "true");
    container.appendChild(box);
  }
  const axis = colourAxis(look), {cmin, cmax} = axis;
  const values = axis.colorbar.tickvals || [0, 0.2, 0.4, 0.6, 0.8, 1];
  const texts = axis.colorbar.ticktext || values.map(String);
  const key = JSON.stringify([axis.colorbar.title.text, values, fig.layout.margin.t, fig.layout.height]);
  if (box.dataset.key === key) return;
  box.dataset.key = key;
  const {t, b} = fig.layout.margin;
  box.style.setProperty("--legend-top", `${t}px`); // beside the figure's rows (page.css)
  box.style.setProperty("--legend-height", `${fig.layout.height - t - b}px`);
  const stops = STYLE.colorscale.map(([at, colour]) => `${colour} ${Math.round(100 * at)}%`).join(", ");
  const bar = Object.assign(document.createElement("div"), {className: "colour-bar"});
  bar.style.setProperty("--stops", stops);
  const ticks = Object.assign(document.createElement("div"), {className: "colour-ticks"});
  values.forEach((v, i) => {
    const tick = Object.assign(document.createElement("span"), {textContent: texts[i]});
    tick.style.setProperty("--at", (v - cmin) / (cmax - cmin)); // its height on the bar
    ticks.appendChild(tick);
  });
  const title = Object.assign(document.createElement("div"), {className: "colour-title", textContent: axis.colorbar.title.text});
  box.replaceChildren(bar, ticks, title);
}

/** `fig` with its colour bar drawn by plotly (for a PNG or SVG of it, where the page's legend is not). */
export function withColourBar(fig, look) {
  return {...fig, layout: {...fig.layout, coloraxis: colourAxis(look)}};
}

/** Cross-hairs from a hovered cell to its row's and column's labels. */
export function spikes() {
  return {showspikes: true, spikemode: "across", spikethickness: 1, spikecolor: STYLE.highlight, spikedash: "solid"};
}

/** A weight's shade for a word, as decoding/decoding.css draws it: its strength (0 white to 1 dark blue, to 3
 * decimals), whether it is red (a negative `signed` value) and whether it is deep enough for white text. */
export function shade(share, signed = false) {
  const a = Math.min(1, Math.abs(share));
  return {strength: a.toFixed(3), negative: signed && share < 0, deep: a > 0.55};
}
