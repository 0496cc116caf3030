// Every head of every kind summarised (attention_lab/core/grids.py): one row of grids per measure (layers down,
// heads across, a block per kind), each cell's value written in it and coloured as the measure says. A click on a
// cell focuses that head in the Attention tab and opens it on that kind. The Heads tab's summary of this sentence
// (heads/summary.mjs) and the survey over a corpus (survey/corpus.mjs, survey/report.mjs) are drawn by it.
// Drawn as elements (a CSS grid, core/views.css), not a plotly figure: a figure of a few hundred cells took 30-40 ms
// to draw again at each Step; the elements a few. The text wraps to the box as any text does.

import {el, openAttentionTab, root} from "../assets/dom.mjs";
import {STYLE, focusLabel, focusOf} from "../assets/style.mjs";
import {slowView} from "../assets/slow.mjs";
import {setKind, setLook} from "../assets/store.mjs";
import {colourAt, palette} from "./tiles.mjs";

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

const SIGNED = palette([[0, "#2166ac"], [0.5, "#f7f7f7"], [1, "#b2182b"]]), SIZED = palette(STYLE.colorscale);
const TEXT_CELL_PX = 34; // the narrowest cell its value is written in (narrower: the value is in the hover)
const LABEL_PX = 36, GAP_PX = 6; // the layers' names at the left; the space between two kinds' blocks

/** A cell's colours for `value` on a scale from `low` to `high`: its background and a text colour that reads on it. */
function colours(value, low, high, signed) {
  const table = signed ? SIGNED : SIZED, i = colourAt(value, low, high);
  const [r, g, b] = [table[i], table[i + 1], table[i + 2]];
  const luma = 0.299 * r + 0.587 * g + 0.114 * b; // Rec. 601: white text on the darker half of the scales
  return {fill: `rgb(${r},${g},${b})`, ink: luma < 140 ? "#fff" : "#222"};
}

/** One measure's rows of cells (layers down; heads across, a block per kind), each {text, fill, ink, where, hover},
 * or null where a kind has no such head; its colour scale as plotly's heatmaps took it (a share from 0 to 1, a
 * signed measure around 0, a size from 0 to its largest). */
function measureRows(data, metric, written) {
  const {kinds, layers, heads} = data, grids = kinds.map((kind) => metric.grids[kind]);
  const values = grids.flatMap((grid) => grid.flat()).filter((v) => v !== null);
  const signed = metric.colouring === "signed", share = metric.colouring === "share";
  const top = share ? 1 : Math.max(0, ...values.map(Math.abs)) || 1e-9;
  return [...Array(layers).keys()].map((l) => kinds.flatMap((kind, b) => [...Array(heads).keys()].map((h) => {
    const value = grids[b][l]?.[h] ?? null;
    if (value === null) return null;
    const where = `${kind}|${focusLabel(l, h)}`;
    return {...colours(value, signed ? -top : 0, top, signed), text: written ? short(value, metric.colouring) : "",
      where, hover: `${focusLabel(l, h)} (${data.short[kind]})\n${metric.name}: ${value.toFixed(3)}`};
  })));
}

/** The summary laid out for a box `width` pixels wide: a row of grids per measure, its name and meaning above it,
 * a block of heads per kind under the kind's name; each cell's value written in it where the cells are wide enough
 * (else it is in the cell's hover). */
export function summaryGrid(data, width = 720) {
  const {kinds, heads, metrics} = data;
  const cell = (width - LABEL_PX - (kinds.length - 1) * GAP_PX) / (kinds.length * heads);
  const written = cell >= TEXT_CELL_PX;
  return {title: data.title, heads, written, kinds: kinds.map((kind) => data.short[kind]),
    measures: metrics.map((metric) => ({name: metric.name, note: metric.note,
      rows: measureRows(data, metric, written)}))};
}

/** The columns of a grid of `grid`'s blocks: the layers' names, then each kind's heads with a gap between blocks. */
function columns(grid) {
  const block = `repeat(${grid.heads}, minmax(0, 1fr))`;
  return [`${LABEL_PX}px`, ...grid.kinds.map((_, b) => (b ? `${GAP_PX}px ${block}` : block))].join(" ");
}

/** The row of names above the grids: each kind's over its block, then its heads'. */
function headRow(grid) {
  const row = el("div", "summary-grid summary-heads");
  const blocks = (each) => grid.kinds.forEach((kind, b) => {
    if (b) row.append(el("span"));
    each(kind);
  });
  row.append(el("span"));
  blocks((kind) => {
    const name = el("span", "summary-kind", kind);
    name.style.setProperty("--heads", grid.heads); // the kind's name spans its heads (core/views.css)
    row.append(name);
  });
  row.append(el("span"));
  blocks(() => {
    for (let h = 0; h < grid.heads; h++) row.append(el("span", "summary-head", `h${h + 1}`));
  });
  return row;
}

/** One measure's grid of cells (summaryGrid's), its layers named at the left. */
function measureGrid(grid, measure) {
  const cells = el("div", "summary-grid");
  measure.rows.forEach((row, l) => {
    cells.append(el("span", "summary-layer", `L${l + 1}`));
    row.forEach((c, i) => {
      if (i && i % grid.heads === 0) cells.append(el("span"));
      if (!c) return cells.append(el("span", "summary-cell none")); // no such head
      const cell = Object.assign(el("span", "summary-cell", c.text), {title: c.hover});
      cell.style.setProperty("--fill", c.fill); // its colours, read by core/views.css
      cell.style.setProperty("--ink", c.ink);
      cell.dataset.where = c.where;
      cell.setAttribute("aria-label", c.hover.replace("\n", ": ")); // its value where it is not written
      cells.append(cell);
    });
  });
  return cells;
}

/** The laid-out summary (summaryGrid) as elements; `onCell(where)` is called with a clicked cell's head (none: the
 * cells are not buttons, as in survey.html). */
export function summaryElement(grid, onCell = null) {
  const box = el("div", onCell ? "summary" : "summary static");
  box.style.setProperty("--columns", columns(grid));
  box.append(el("div", "summary-title", grid.title), headRow(grid));
  for (const measure of grid.measures) {
    const note = el("div", "summary-note");
    note.append(el("b", "summary-name", measure.name), `: ${measure.note}`);
    box.append(note, measureGrid(grid, measure));
  }
  if (onCell) box.addEventListener("click", (event) => {
    const cell = event.target.closest("[data-where]");
    if (cell) onCell(cell.dataset.where);
  });
  return box;
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
    box.replaceChildren(el("div", "summary-empty", computing || (message && message.text) || "Run or Step to decode."));
    return;
  }
  box.replaceChildren(summaryElement(summaryGrid(message, box.clientWidth || undefined), focusCell));
}

/** How a component showing a summary under `label` mounts (this sentence's, the corpus's), drawn when it is on
 * screen, and again when it comes into view; `here`: the tab whose summary the page may make (assets/here.mjs). */
export function summaryView(label, here = null) {
  return (component) => {
    const box = root(component.element);
    const summary = el("div", "summary-box");
    box.replaceChildren(el("div", "lab-label", label), summary);
    let drew = null; // what was drawn: the same grid again (a survey's, handed over at each Step) is not redrawn
    slowView(component, summary, (view) => {
      const drawing = [view.message?.metrics ?? view.message, view.computing, summary.clientWidth];
      if (drew && drawing.every((v, i) => v === drew[i])) return;
      drew = drawing;
      drawSummary(summary, view);
    }, {on: () => false, here});
  };
}
