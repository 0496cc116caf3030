// The Training tab: the model at each snapshot of its training decoding this source. A slider (or ▶ Play) goes
// through them; the shown one's line of measures, its output and its cross-attention, and the chart of validation
// loss and alignment against training step with the shown snapshot marked, are all drawn here from the film the
// server sends once, or the page makes (in_page.mjs) where its copy carries the snapshots.

import {Decoding} from "../assets/decoding.mjs";
import {el, labelled, root, shown, sourceText} from "../assets/dom.mjs";
import {draw, emptyFigure, legend} from "../assets/plot.mjs";
import {askAgain, computesHere} from "../assets/here.mjs";
import {slowView} from "../assets/slow.mjs";
import {page} from "../assets/store.mjs";
import {kindFigures} from "../core/figures.mjs";
import {paint} from "../core/tiles.mjs";
import {filmed, made} from "./in_page.mjs";

computesHere("training", made, filmed, () => ({source: sourceText()}), true); // the source typed, Run or not
const TYPED_MS = 300; // the film is made again this long after the Source stops changing
let typing = null;
globalThis.document?.addEventListener("input", (event) => {
  if (!event.target.closest?.("#lab-source")) return;
  clearTimeout(typing);
  typing = setTimeout(() => askAgain("training"), TYPED_MS);
});

export const PLAY = "▶ Play", PAUSE = "❚❚ Pause";
const FRAME_MS = 1200; // a snapshot a tick while playing
const COLOURS = {loss: "#1f4e79", alignment: "#c0392b", score: "#2e8b57", mark: "#f39c12"};

function line(x, y, name, colour, axis, steps, digits = 1) {
  return {type: "scatter", mode: "lines+markers", x, y, name, yaxis: axis, line: {color: colour}, customdata: steps,
    text: y.map((v) => (v === null || v === undefined ? "" : v.toFixed(digits))), connectgaps: false,
    hovertemplate: `${name}: %{text}<extra>step %{customdata}</extra>`};
}

/** Validation loss (left axis) and, in percent (right axis), the best cross head's alignment on this source and the
 * validation score, a point per snapshot, evenly spaced as they were taken (log-spaced); snapshot `current` marked. */
export function chartFigure(film, current) {
  const frames = film.snapshots, x = frames.map((_, i) => i);
  const steps = frames.map((f) => f.step.toLocaleString("en-US"));
  const data = [line(x, frames.map((f) => f.loss ?? null), "validation loss", COLOURS.loss, "y", steps, 3)];
  if (frames.some((f) => f.alignment !== null && f.alignment !== undefined)) {
    data.push(line(x, frames.map((f) => (f.alignment ?? null) === null ? null : 100 * f.alignment),
      "best cross head's alignment, this source (%)", COLOURS.alignment, "y2", steps));
  }
  for (const [name, factor] of Object.entries(film.factors || {})) {
    const values = frames.map((f) => (f.scores[name] ?? null) === null ? null : factor * f.scores[name]);
    if (values.some((v) => v !== null)) data.push(line(x, values, name + (factor === 100 ? " (%)" : ""), COLOURS.score, "y2", steps));
  }
  const marked = frames[current] ? frames[current].step.toLocaleString("en-US") : "";
  return {data, layout: {title: {text: `${film.model} across training: step ${marked} shown`, font: {size: 13}},
    height: 300, margin: {l: 60, r: 60, t: 40, b: 80}, plot_bgcolor: "white", hovermode: "x unified",
    xaxis: {tickvals: x, ticktext: steps, title: {text: "training step (snapshots at roughly log-spaced steps)"},
      range: [-0.5, frames.length - 0.5]},
    yaxis: {title: {text: "validation loss"}, rangemode: "tozero", color: COLOURS.loss},
    yaxis2: {title: {text: "%"}, overlaying: "y", side: "right", range: [0, 105], showgrid: false},
    legend: {orientation: "h", y: -0.45, x: 0},
    shapes: [{type: "rect", xref: "x", yref: "paper", x0: current - 0.4, x1: current + 0.4, y0: 0, y1: 1,
      fillcolor: COLOURS.mark, opacity: 0.25, line: {width: 0}}]}};
}

/** Whether two messages are the same film: the page's own, handed over again with each Step's key, is. */
const sameFilm = (a, b) => a === b || (!!a && !!b && a.snapshots === b.snapshots);

const DECODED = new WeakMap(); // frame -> its decoding, read from its data once (the message itself is left as sent)

/** A frame's decoding, read from its data the first time it is shown (a film holds ten; one is drawn at a time). */
function decoded(frame) {
  if (!DECODED.has(frame)) DECODED.set(frame, frame.data ? new Decoding(frame.data) : null);
  return DECODED.get(frame);
}

export function mount(component) {
  const box = root(component.element);
  const range = Object.assign(el("input"), {type: "range", min: 0, max: 0, step: 1, value: 0, id: "snapshot"});
  const play = Object.assign(el("button", "film-play", PLAY), {type: "button", id: "play"});
  const bar = el("div", "film-bar");
  bar.append(labelled("Snapshot", range), play);
  const info = el("div", "film-info"), output = el("div", "film-output");
  const chart = el("div", "film-chart"), focus = el("div", "film-focus"), grid = el("div", "film-grid");
  const figures = el("div", "views-figures film-figures");
  figures.append(focus, grid);
  box.replaceChildren(bar, info, output, chart, figures);
  let film = null, index = 0, timer = null, from = null; // from: the [message, placeholder] `film` was made of
  let drew = ""; // what the figures were last drawn for: a Step hands the same film over and redraws nothing

  const stop = () => {
    clearInterval(timer);
    timer = null;
    play.textContent = PLAY;
  };
  const at = (i) => {
    const n = film ? film.snapshots.length : 0;
    index = Math.max(0, Math.min(Number(i) || 0, n - 1));
    range.value = index;
    const frame = film && film.snapshots[index];
    info.textContent = frame ? `Snapshot ${index + 1} of ${n}: ${frame.info}` : (film && film.message) || "";
    output.textContent = frame ? `Output of this snapshot: ${frame.output || "∅"}` : "";
    if (!shown(box) || !frame) return;
    const drawing = JSON.stringify([index, box.clientWidth, page.look]);
    if (drew === drawing) return;
    drew = drawing;
    draw(chart, chartFigure(film, index));
    if (!decoded(frame)) {
      draw(focus, emptyFigure(frame.error || "No decoding.", 200));
      grid.replaceChildren();
      return;
    }
    const d = decoded(frame), size = {focusHeight: 420, gridWidth: Math.min(grid.clientWidth || 360, 420), gridHeight: 300};
    const made = kindFigures(d, "cross", d.steps.length, page.look, size);
    draw(focus, made.focus);
    legend(focus, made.focus, page.look);
    if (made.grid) paint(grid, made.grid, size.gridWidth, size.gridHeight);
    else grid.replaceChildren();
  };
  range.addEventListener("input", () => { stop(); at(range.value); });
  play.addEventListener("click", () => {
    if (timer) return stop();
    if (!film || film.snapshots.length < 2) return;
    if (index >= film.snapshots.length - 1) at(0);
    play.textContent = PAUSE;
    timer = setInterval(() => (index >= film.snapshots.length - 1 || !shown(box) ? stop() : at(index + 1)), FRAME_MS);
  });
  const load = (message, computing) => { // another film (a placeholder while one is decoded): stopped, and set out
    stop();
    from = [message, computing];
    drew = "";
    film = computing ? {snapshots: [], message: computing} : message;
    range.max = Math.max(0, film ? film.snapshots.length - 1 : 0);
    range.disabled = !film || film.snapshots.length < 2;
    if (!film || !film.snapshots.length) {
      chart.replaceChildren();
      grid.replaceChildren();
      if (film && film.message) focus.replaceChildren(); // the line above the figures says it
      else draw(focus, emptyFigure("Open this tab to decode the source with every snapshot.", 160));
    }
  };
  slowView(component, box, ({message, computing}) => {
    if (!from || !sameFilm(from[0], message) || from[1] !== computing) load(message, computing);
    at(index);
  }, {on: (what) => what === "look", here: "training"});
}
