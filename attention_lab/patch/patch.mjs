// The Patch tab: at the shown step, r of every restored part (encoder layers × source positions, decoder layers ×
// target positions, each kind's layers × heads) on a scale centred on 0, a line saying where the difference lives,
// and, for a clicked cell, that part's r at every step. The whole decoding is patched once, by the server
// (attention_lab/patch/feature.py) or, while the page decodes, by the page itself (in_page.mjs, from the page copy's
// patching graph); every step is drawn here from what the page holds. A click on a source word corrupts it (noise or
// a swap, as the tab's radio says): the page keeps what the tab asks as the server does (`asking`), and makes the
// message again; a swap is the server's (it finds the close word), which then makes the message until the tab asks
// for something the page makes (a typed source, Start again) or another run comes.

import {el, root} from "../assets/dom.mjs";
import {axisLabels, escapeToken} from "../assets/labels.mjs";
import {STYLE} from "../assets/style.mjs";
import {draw, onClick, outline} from "../assets/plot.mjs";
import {askAgain, computesHere, textsOf} from "../assets/here.mjs";
import {slowView} from "../assets/slow.mjs";
import {page} from "../assets/store.mjs";
import {made} from "./in_page.mjs";

/** What the tab asks, as the page keeps it to make the message itself (feature.py PatchState, which the server keeps
 * from the same clicks): for one run (its serial), the corrupted source as typed (null: the clean one), the words
 * with noise (0-based), whether a swap is what it shows, and what a click on a word does (null: the radio's first). */
export const asking = {serial: null, corrupted: null, noise: new Set(), swapped: false, how: null};
let rewrite = null; // puts the clean source into the Corrupted box (the component's "clean" event), once mounted

/** Whether `serial` names another run than the one `asking` is for: it is then for that one, which starts as the
 * clean source, with no noise (as the server's PatchState of a new run). */
function own(serial) {
  if (serial === asking.serial) return false;
  Object.assign(asking, {serial, corrupted: null, noise: new Set(), swapped: false});
  return true;
}

/** What the tab asks of the decoding `run` ({ids, tokens, ablated, key, limit}) of `model`, as in_page.mjs `made`
 * takes it; a run the page patches first shows the clean source in its Corrupted box. */
export function askedOf(model, run) {
  if (own(run.key?.serial ?? null)) rewrite?.();
  return {corrupted: asking.corrupted, noise: [...asking.noise], limit: run.limit ?? null};
}

/** Whether the page makes the tab's message with its controls as they are: not while a swap is shown, unless the
 * page holds another run by now. */
export function madeHereNow() {
  return !asking.swapped || (page.key !== null && page.key.serial !== asking.serial);
}

computesHere("patch", (model, run) => made(model, run, run.asked ?? askedOf(model, run)), madeHereNow, askedOf);

/** A click on the source word `index` (0-based), before the server hears of it: noise on or off, or a swap, which
 * hands the tab to the server with this very click (the event sends what the page draws: assets/here.mjs). */
export function clicked(index) {
  own(page.key?.serial ?? null); // a click on the run the page shows
  const clicks = textsOf("patch").clicks || {};
  if ((asking.how ?? clicks.first) === clicks.swap) asking.swapped = true;
  else if (!asking.noise.delete(index)) asking.noise.add(index);
  askAgain("patch");
}

const cleanSource = () => document.querySelector("#lab-source textarea")?.value ?? null;

// The tab's controls, heard by listeners that send nothing to the server (feature.py wire): it hears them too
globalThis.attentionLabPatch = {
  typed(text) { // Patch, or Enter in the Corrupted box
    own(page.key?.serial ?? null);
    Object.assign(asking, {corrupted: text || "", swapped: false});
    askAgain("patch");
  },
  startAgain() { // the clean source again, no noise; what the Corrupted box shows
    own(page.key?.serial ?? null);
    Object.assign(asking, {corrupted: null, noise: new Set(), swapped: false});
    askAgain("patch");
    return cleanSource();
  },
  clicks(how) { // the radio: what a click on a word does
    asking.how = how;
  },
  clean: cleanSource, // what the Corrupted box shows for a run the page patches first
};

export const KIND_TITLES = {encoder: "Encoder self heads", decoder_self: "Decoder self heads", cross: "Cross heads"};
const SCALE = [[0, "#b2182b"], [0.25, "#ef8a62"], [0.5, "#f7f7f7"], [0.75, "#67a9cf"], [1, "#2166ac"]];
const LEGEND = "Blue: restoring that part alone brings the clean token's log p back (1: fully); white: no change from "
  + "the corrupted run (0); red: further from the clean run. Empty: nothing to restore. Hover a cell for its r.";
const BAR = {thickness: 10, tickvals: [-1, 0, 1], ticktext: ["−1", "0: as corrupted", "1: fully restored"]};

/** The message's step `shown` (1-based) if it patched the decoding the page holds up to it; null otherwise. */
export function stepOf(message, decoding, shown) {
  if (!message || !decoding || !shown || shown > message.steps.length) return null;
  for (let i = 0; i < shown; i++) if (!decoding.steps[i] || decoding.steps[i].token !== message.tokens[i]) return null;
  return message.steps[shown - 1];
}

/** The largest r in a grid of r (nulls left out), with where it is: {value, row, column}, or null if none. */
export function largest(grid) {
  let best = null;
  grid.forEach((row, i) => row.forEach((v, j) => {
    if (v !== null && (best === null || v > best.value)) best = {value: v, row: i, column: j};
  }));
  return best;
}

const pct = (r) => `${Math.round(100 * r)}%`;

/** One line: where the clean token's log p comes back from, at this step. */
export function summary(record, message) {
  const change = `log p of “${record.token}” ${record.clean_logp.toFixed(2)} clean, ${record.corrupted_logp.toFixed(2)}`
    + " corrupted";
  const encoder = largest(record.encoder_states);
  if (encoder === null) return `Step ${record.step}: ${change}: the corruption hardly changes it, nothing to restore.`;
  const last = record.encoder_states.length - 1, at = message.source[encoder.column];
  const through = record.encoder_states.map((row) => row[encoder.column]).filter((v) => v !== null && v >= 0.5).length;
  const heads = Object.entries(record.heads).map(([kind, grid]) => [kind, largest(grid)]).filter(([, b]) => b)
    .sort((a, b) => b[1].value - a[1].value)[0];
  const decoder = largest(record.decoder_states);
  let line = `Step ${record.step}: ${change}. The difference lives at source position ${encoder.column + 1} (“${at}”):`
    + ` restoring it after encoder layer ${encoder.row + 1} brings back ${pct(encoder.value)}`;
  line += through > 1 ? ` (≥ 50% after ${through} of ${last + 1} layers).` : ".";
  if (heads) line += ` Of the heads, ${KIND_TITLES[heads[0]].toLowerCase().replace(" heads", "")} ${heads[1].row + 1}.`
    + `${heads[1].column + 1} restores most (${pct(heads[1].value)})`;
  if (decoder) line += `; of the decoder's states, layer ${decoder.row + 1} at “${message.prefix[decoder.column]}”`
    + ` (${pct(decoder.value)}).`;
  return line;
}

const CELL_TEXT_PX = 34; // a cell narrower than this shows its r on hover only

/** A grid of r as a heatmap: rows down, columns across; the picked cell outlined. `room`: the px it is drawn in
 * (cell values are written where cells are wide enough); `bar`: whether it carries the colour scale's legend. */
export function restoredGrid(z, columns, rows, title, picked = null, room = 0, bar = true) {
  const shapes = picked ? [outline(picked[1] - 0.5, picked[1] + 0.5, picked[0] - 0.5, picked[0] + 0.5,
    STYLE.focusLine, 2.5)] : [];
  const text = z.map((row) => row.map((v) => (v === null ? "" : v.toFixed(2))));
  const hover = z.map((row, i) => row.map((v, j) => `${rows[i]}, ${escapeToken(String(columns[j]))}: `
    + (v === null ? "nothing to restore" : `r = ${v.toFixed(3)}`)));
  const xs = [...columns.keys()], ys = [...rows.keys()];
  const plotted = (room || 400) - 80 - (bar ? 120 : 0);
  const wide = columns.length > 0 && plotted / columns.length >= CELL_TEXT_PX;
  return {data: [{type: "heatmap", z, x: xs, y: ys, text, customdata: hover, texttemplate: wide ? "%{text}" : "",
    textfont: {size: 10}, zmin: -1, zmid: 0, zmax: 1, colorscale: SCALE, colorbar: BAR, showscale: bar, xgap: 1,
    ygap: 1, hovertemplate: "%{customdata}<extra></extra>"}],
  layout: {title: {text: title, font: {size: 12}, x: 0, xanchor: "left"}, height: Math.max(150, 30 * rows.length + 110),
    margin: {l: 70, r: 10, t: 36, b: 70}, plot_bgcolor: "white", shapes,
    xaxis: {tickvals: xs, ticktext: axisLabels(columns), tickangle: columns.length > 8 ? -45 : 0, showgrid: false,
      zeroline: false},
    yaxis: {tickvals: ys, ticktext: rows, autorange: "reversed", showgrid: false, zeroline: false}}};
}

/** The figures of one step: [name, figure] for the encoder's states, the decoder's, and each kind's heads; `rooms`
 * gives the px each is drawn in. The encoder's grid carries the colour legend the others share. */
export function stepFigures(record, message, picked, rooms = {}) {
  const layers = (n) => [...Array(n).keys()].map((l) => `layer ${l + 1}`);
  const at = (site) => (picked && picked.site === site ? [picked.layer, picked.index] : null);
  const figures = [
    ["encoder_states", restoredGrid(record.encoder_states, message.source, layers(record.encoder_states.length),
      "Encoder layer outputs × source positions", at("encoder_states"), rooms.encoder_states)],
    ["decoder_states", restoredGrid(record.decoder_states, message.prefix.slice(0, record.step),
      layers(record.decoder_states.length), "Decoder layer outputs × target positions", at("decoder_states"),
      rooms.decoder_states, false)],
  ];
  for (const [kind, grid] of Object.entries(record.heads)) {
    const heads = grid.length ? grid[0].map((_, h) => `h${h + 1}`) : [];
    figures.push([kind, restoredGrid(grid, heads, layers(grid.length), KIND_TITLES[kind], at(kind), rooms[kind], false)]);
  }
  return figures;
}

/** The picked part's r at every step, as a line (gaps where there is nothing to restore). */
export function traceFigure(message, picked) {
  const value = (record) => {
    const grid = picked.site === "encoder_states" || picked.site === "decoder_states" ? record[picked.site]
      : record.heads[picked.site];
    const row = grid[picked.layer];
    return row && picked.index < row.length ? row[picked.index] : null;
  };
  const ys = message.steps.map(value);
  const xs = message.steps.map((r) => `${r.step}: ${escapeToken(r.token)}`);
  const where = picked.site === "encoder_states" ? `encoder layer ${picked.layer + 1} at “${message.source[picked.index]}”`
    : picked.site === "decoder_states" ? `decoder layer ${picked.layer + 1} at “${message.prefix[picked.index]}”`
      : `${KIND_TITLES[picked.site].replace("heads", "head")} ${picked.layer + 1}.${picked.index + 1}`;
  return {data: [{type: "scatter", mode: "lines+markers", x: xs, y: ys, connectgaps: false,
    hovertemplate: "step %{x}<br>r = %{y:.3f}<extra></extra>", line: {color: STYLE.highlight}}],
  layout: {title: {text: `Restoring ${where}, at every step`, font: {size: 12}, x: 0, xanchor: "left"}, height: 220,
    margin: {l: 50, r: 10, t: 36, b: 70}, plot_bgcolor: "white", xaxis: {type: "category", tickangle: -45},
    yaxis: {range: [-0.2, 1.2], zeroline: true, title: {text: "r"}},
    shapes: [{type: "line", xref: "paper", x0: 0, x1: 1, y0: 1, y1: 1, line: {color: "#2166ac", dash: "dot", width: 1}}]}};
}

function sourceWords(message) {
  const list = el("div", "words patch-words");
  message.words.forEach((w, i) => {
    if (i) list.append(" ");
    const span = el("span", "word", w.label);
    span.dataset.word = String(i);
    const changed = message.changed && w.pieces.some((p) => message.changed[p]);
    if (message.noise.includes(i)) span.classList.add("noisy");
    else if (changed) span.classList.add("changed");
    span.title = "Click: add or remove noise, or swap it for a close word (as chosen above)";
    list.appendChild(span);
  });
  return list;
}

export function mount(component) {
  const box = root(component.element);
  rewrite = () => component.trigger("clean");
  const busy = el("div", "patch-busy"), top = el("div", "patch-top"), line = el("div", "patch-summary");
  const states = el("div", "patch-states"), heads = el("div", "patch-heads"), trace = el("div", "patch-trace");
  const boxes = {encoder_states: el("div"), decoder_states: el("div"), encoder: el("div"), decoder_self: el("div"),
    cross: el("div")};
  states.append(boxes.encoder_states, boxes.decoder_states);
  heads.append(boxes.encoder, boxes.decoder_self, boxes.cross);
  const legend = el("div", "patch-note");
  box.replaceChildren(busy, top, line, legend, states, heads, trace);
  let picked = null;
  const clear = () => {
    for (const b of Object.values(boxes)) b.replaceChildren();
    trace.replaceChildren();
  };
  const redraw = ({message, computing, redraw: again}) => {
    busy.textContent = computing;
    top.replaceChildren();
    if (!message) {
      line.textContent = computing ? "" : "Run or Step, then corrupt the source here.";
      clear();
      return;
    }
    top.append(el("div", "lab-label", "Source (click a word to corrupt it)"), sourceWords(message));
    if (message.corrupted_output !== undefined) {
      top.append(el("div", "patch-note", `From the corrupted source the model writes: “${message.corrupted_output}”.`
        + (message.held ? ` ${message.held}` : "")));
    }
    const record = stepOf(message, page.decoding, page.shown);
    if (message.hint || !record) {
      legend.textContent = "";
      line.textContent = message.hint || (page.shown ? "Patching this step…" : "Step 0: nothing written yet.");
      clear();
      return;
    }
    line.textContent = summary(record, message);
    legend.textContent = LEGEND;
    const rooms = Object.fromEntries(Object.entries(boxes).map(([site, b]) => [site, b.clientWidth]));
    for (const [site, figure] of stepFigures(record, message, picked, rooms)) {
      onClick(draw(boxes[site], figure), (point) => {
        picked = {site, layer: point.y, index: point.x};
        again();
      });
    }
    if (picked) draw(trace, traceFigure(message, picked));
    else trace.replaceChildren(el("div", "patch-note", "Click a cell to see that part's r at every step."));
  };
  box.addEventListener("click", (event) => {
    const word = event.target.closest(".patch-words .word[data-word]");
    if (!word) return;
    clicked(Number(word.dataset.word));
    component.trigger("select", {word: Number(word.dataset.word), shown: page.shown});
  });
  const take = (value, last) => {
    if (!last || JSON.stringify(last.source) !== JSON.stringify(value.source)) picked = null;
    return value.op === "patch" ? value : null;
  };
  slowView(component, box, redraw, {take, here: "patch"});
}
