// The Beam tree tab's tree: every continuation the beam search weighed (attention_lab/beam_tree/feature.py sends it
// as columns, a value per node), a column per step. In a column, the children of each node of the column before, in
// that node's order, likeliest first: the best hypotheses stay near the top. Edges are as thick as the token is
// likely; pruned branches are faded, and "Fold pruned branches" folds each node's into one "+n" mark (a click on it
// unfolds that node's). The best hypothesis is orange, the decoding the page holds ringed in blue, the clicked node
// ringed in black. A long sentence pans (drag) rather than shrinks. A click on a node shows its hypothesis's
// attention (beam_tree/hypothesis.mjs draws it). While the page decodes, the page searches and records the tree
// itself (in_page.mjs), with the tab's beam size, and makes a clicked node's hypothesis; else the server does.

import {askAgain, computedHere, computesHere} from "../assets/here.mjs";
import {el, labelled, root} from "../assets/dom.mjs";
import {escapeToken} from "../assets/labels.mjs";
import {draw, emptyFigure, onClick} from "../assets/plot.mjs";
import {slowView} from "../assets/slow.mjs";
import {page} from "../assets/store.mjs";

import {made, pickHere, unpicked} from "./in_page.mjs";

export const PICKED_EVENT = "attention-lab-beam-node"; // on document, {detail: {node}}: the hypothesis drawn below
const STEP_PX = 92, NARROW = 600, ROW_PX = 26, MAX_HEIGHT = 560, MARGIN = {l: 14, r: 14, t: 8, b: 30};
const STATES = {k: "kept", p: "pruned", f: "finished"};
const COLOURS = {k: "#4575b4", p: "#b8b8b8", f: "#1a9850", fold: "#8c8c8c", best: "#e66101", current: "#08306b"};
const WIDTHS = [1, 2, 3.2, 4.6, 6]; // an edge's width by its token's probability, in fifths
const FOLD_ABOVE = 4; // a larger beam opens folded: its pruned branches would fill the screen

/** What the tab asks of the tree: the beam size its slider gives (4, the app's first, where there is none). */
export function treeAsked() {
  return {beam: Number(globalThis.document?.querySelector("#beam-tree-beam input")?.value) || 4};
}

computesHere("beam_tree", (model, run) => made(model, run, run.asked ?? treeAsked()), () => true, treeAsked);
globalThis.document?.addEventListener("change", (event) => {
  if (event.target.closest?.("#beam-tree-beam")) askAgain("beam_tree");
}, true);

/** The message's nodes as objects ({id, parent, step, token, label, logp, total, state, children}), in id order. */
export function treeNodes(message) {
  const nodes = message.parent.map((parent, id) => ({id, parent: parent < 0 ? null : parent, step: message.step[id],
    token: message.token[id], label: message.label[id], logp: message.logp[id], total: message.total[id],
    state: message.state[id], children: []}));
  for (const node of nodes) if (node.parent !== null) nodes[node.parent].children.push(node);
  for (const node of nodes) node.children.sort((a, b) => b.logp - a.logp || a.id - b.id);
  return nodes;
}

/** The ids from the root to `id`, both included. */
export function pathTo(nodes, id) {
  const path = [];
  for (let at = id; at !== null && at !== undefined; at = nodes[at].parent) path.push(at);
  return path.reverse();
}

/** The nodes the decoding `tokens` (token ids after the start token) passes through in the tree, root included; it
 * stops where the decoding leaves the tree. */
export function decodingPath(nodes, tokens) {
  const path = [0];
  for (const token of tokens) {
    const next = nodes[path[path.length - 1]].children.find((c) => c.token === token);
    if (!next) break;
    path.push(next.id);
  }
  return path;
}

/** Where each drawn node goes: {rows: Map(id -> row), marks: [{parent, step, row, ids}], height: rows in the
 * tallest column}. With `fold`, a node's pruned children (unless the node is in `unfolded`) are one mark. */
export function treeLayout(nodes, fold, unfolded = new Set()) {
  const rows = new Map([[0, 0]]), marks = [];
  let column = [nodes[0]], height = 1;
  while (column.length) {
    const next = [];
    let row = 0;
    for (const node of column) {
      const folded = fold && !unfolded.has(node.id);
      const hidden = folded ? node.children.filter((c) => c.state === "p") : [];
      for (const child of node.children) {
        if (hidden.includes(child)) continue;
        rows.set(child.id, row++);
        next.push(child);
      }
      if (hidden.length) marks.push({parent: node.id, step: node.step + 1, row: row++, ids: hidden.map((c) => c.id)});
    }
    height = Math.max(height, row);
    column = next;
  }
  return {rows, marks, height};
}

/** The score a finished hypothesis is ranked by: its total under the GNMT length penalty (length counts the end
 * token), as transformer.decoding.length_normalise. */
export function finishedScore(total, length, alpha) {
  return total / ((5 + length) / 6) ** alpha;
}

const p = (logp) => Math.exp(logp);
const fixed = (v) => v.toFixed(3).replace("-", "−");

function hover(node, alpha) {
  const lines = [`step ${node.step}: ${escapeToken(node.label)}`, `log p ${fixed(node.logp)} (p ${(100 * p(node.logp)).toFixed(1)}%)`,
    `total ${fixed(node.total)}`, STATES[node.state]];
  if (node.state === "f") lines.push(`score with the length penalty ${fixed(finishedScore(node.total, node.step, alpha))}`);
  return lines.join("<br>");
}

/** The edges as traces: one per width and look (pruned faded, the rest blue, the best path orange over them). */
function edgeTraces(nodes, rows, best) {
  const groups = new Map();
  for (const [id, row] of rows) {
    const node = nodes[id];
    if (node.parent === null || !rows.has(node.parent)) continue;
    const width = WIDTHS[Math.min(4, Math.floor(5 * p(node.logp)))];
    const look = best.has(id) ? "best" : node.state === "p" ? "p" : "k";
    const key = `${look} ${width}`;
    if (!groups.has(key)) groups.set(key, {look, width, x: [], y: []});
    const g = groups.get(key);
    g.x.push(node.step - 1, node.step, null);
    g.y.push(rows.get(node.parent), row, null);
  }
  const order = {p: 0, k: 1, best: 2};
  return [...groups.values()].sort((a, b) => order[a.look] - order[b.look]).map((g) => ({
    type: "scatter", mode: "lines", x: g.x, y: g.y, hoverinfo: "skip", showlegend: false,
    line: {color: COLOURS[g.look], width: g.look === "best" ? g.width + 1.5 : g.width},
    opacity: g.look === "p" ? 0.35 : 1}));
}

function nodeTrace(nodes, rows, ids, colour, opacity, alpha, name) {
  const shown = ids.filter((id) => rows.has(id));
  return {type: "scatter", mode: "markers+text", name, showlegend: false, x: shown.map((id) => nodes[id].step),
    y: shown.map((id) => rows.get(id)), text: shown.map((id) => escapeToken(nodes[id].label)), textposition: "top center",
    textfont: {size: 11, color: opacity < 1 ? "#999" : "#222"}, customdata: shown.map((id) => ["node", id]),
    hovertext: shown.map((id) => hover(nodes[id], alpha)), hoverinfo: "text", opacity,
    marker: {size: 9, color: colour, line: {width: 0}}, cliponaxis: false};
}

function ringTrace(nodes, rows, ids, colour, size, width) {
  const shown = ids.filter((id) => rows.has(id));
  return {type: "scatter", mode: "markers", x: shown.map((id) => nodes[id].step), y: shown.map((id) => rows.get(id)),
    hoverinfo: "skip", showlegend: false, marker: {size, color: "rgba(0,0,0,0)", line: {color: colour, width}}};
}

function markTrace(marks, nodes) {
  return {type: "scatter", mode: "markers+text", showlegend: false, x: marks.map((m) => m.step),
    y: marks.map((m) => m.row), text: marks.map((m) => `+${m.ids.length}`), textposition: "middle right",
    textfont: {size: 10, color: COLOURS.fold}, customdata: marks.map((m) => ["mark", m.parent]), hoverinfo: "text",
    hovertext: marks.map((m) => `${m.ids.length} pruned: ` + m.ids.slice(0, 6).map((id) => escapeToken(nodes[id].label)).join(", ")
      + (m.ids.length > 6 ? "…" : "") + "<br>click to unfold"),
    marker: {size: 7, symbol: "diamond", color: COLOURS.fold}};
}

/** The tree's figure, `width` pixels wide: x is the step, y the row; it opens on the first steps that fit. */
export function treeFigure(message, nodes, view, width) {
  const {rows, marks, height} = treeLayout(nodes, view.fold, view.unfolded);
  const best = new Set(message.best === null ? [] : pathTo(nodes, message.best));
  const ids = (state) => nodes.filter((n) => n.state === state && n.id !== 0).map((n) => n.id);
  const lastStep = Math.max(...nodes.map((n) => n.step));
  const fitSteps = Math.max(width < NARROW ? 4 : 2, Math.floor((width - MARGIN.l - MARGIN.r) / STEP_PX)); // a phone: 4
  const fitRows = Math.floor((MAX_HEIGHT - MARGIN.t - MARGIN.b) / ROW_PX);
  const figureHeight = Math.min(MAX_HEIGHT, Math.max(160, height * ROW_PX + MARGIN.t + MARGIN.b + 12));
  const data = [
    ...edgeTraces(nodes, rows, best),
    nodeTrace(nodes, rows, ids("p"), COLOURS.p, 0.55, message.alpha, "pruned"),
    nodeTrace(nodes, rows, [0, ...ids("k")], COLOURS.k, 1, message.alpha, "kept"),
    nodeTrace(nodes, rows, ids("f"), COLOURS.f, 1, message.alpha, "finished"),
    ringTrace(nodes, rows, [...best], COLOURS.best, 13, 2),
  ];
  if (marks.length) data.push(markTrace(marks, nodes));
  const axis = {showgrid: false, zeroline: false, showline: false};
  const layout = {height: figureHeight, margin: MARGIN, uirevision: view.revision, // a redraw keeps where it was panned
    dragmode: "pan", hovermode: "closest", plot_bgcolor: "white",
    xaxis: {...axis, range: [-0.4, Math.min(lastStep, fitSteps - 1) + 0.5], tickmode: "linear", dtick: 1, tick0: 0,
      ticks: "", title: {text: "step", standoff: 2, font: {size: 11}}},
    yaxis: {...axis, showticklabels: false, fixedrange: height <= fitRows,
      range: [Math.min(height, fitRows) - 0.4, -0.9]}, shapes: rings(nodes, rows, view.current, view.picked)};
  return {data, layout, rows};
}

/** A ring of `r` pixels around each drawn node of `ids`, as shapes. */
function ringShapes(nodes, rows, ids, r, line) {
  return ids.filter((id) => rows.has(id)).map((id) => ({type: "circle", xref: "x", yref: "y", xsizemode: "pixel",
    ysizemode: "pixel", xanchor: nodes[id].step, yanchor: rows.get(id), x0: -r, x1: r, y0: -r, y1: r, line}));
}

/** The rings that move without the tree being drawn again (Plotly.relayout of its shapes): around the decoding's
 * nodes (`current`: a Step moves it) and the clicked node (`picked`, null for none). */
export function rings(nodes, rows, current, picked) {
  return [...ringShapes(nodes, rows, current, 8.5, {color: COLOURS.current, width: 1.5}),
    ...ringShapes(nodes, rows, picked === null ? [] : [picked], 11, {color: "#000", width: 2.5})];
}

/** Whether the tree `message` searched the run whose decoding the page holds (`key`: {serial, version}, or null). */
export function ofRun(message, key) {
  return !!key && key.serial === message.serial;
}

/** The line under the tree: the beam size, the node count and the best hypothesis. */
export function treeSummary(message, nodes) {
  const pruned = nodes.filter((n) => n.state === "p").length;
  return `Beam size ${message.beam}: ${nodes.length} nodes, ${pruned} pruned. Best hypothesis (orange): `
    + `“${message.text}”, total log p ${fixed(message.best === null ? 0 : nodes[message.best].total)}. `
    + `Finished hypotheses are ranked by total / ((5 + length) / 6)^${message.alpha} (GNMT's length penalty).`;
}

function legend() {
  const row = el("div", "beam-tree-legend");
  for (const [colour, text] of [[COLOURS.best, "best hypothesis"], [COLOURS.k, "kept"], [COLOURS.f, "finished"],
    [COLOURS.p, "pruned"], [COLOURS.current, "the decoding (ringed)"]]) {
    const swatch = el("span", "beam-tree-swatch");
    swatch.style.setProperty("--swatch", colour);
    row.append(swatch, el("span", "", text));
  }
  return row;
}

export function mount(component) {
  const box = root(component.element);
  const busy = el("div", "beam-tree-busy"), summary = el("div", "beam-tree-summary"), figure = el("div", "beam-tree-figure");
  const fold = Object.assign(el("input"), {type: "checkbox", checked: false});
  const bar = el("div", "beam-tree-bar");
  bar.append(labelled("Fold pruned branches", fold, "check"), legend());
  box.replaceChildren(busy, bar, figure, summary);
  let nodes = [], picked = null, folded = null, unfolded = new Set(), rows = new Map(), revision = 0;
  let drawn = null; // what the figure's tree was drawn for: the same again moves its rings alone
  const current = () => decodingPath(nodes, page.decoding ? page.decoding.steps.map((s) => s.token) : []).slice(1);
  const ring = () => { // the decoding's and the clicked node's rings: the tree's layout alone changes
    const gd = figure.querySelector(".js-plotly-plot");
    if (gd && tree.message) globalThis.Plotly.relayout(gd, {shapes: rings(nodes, rows, current(), picked)});
  };
  const redraw = ({message, computing}) => {
    const drawing = message && [message.parent, fold.checked, folded, unfolded.size, revision, figure.clientWidth];
    if (drawn && drawing && ofRun(message, page.key) && !computing && drawing.every((v, i) => v === drawn[i])) {
      busy.textContent = "";
      return ring(); // a Step: the same tree, the decoding's ring moved
    }
    drawn = null;
    busy.textContent = computing;
    if (!message || !ofRun(message, page.key)) { // a tree of an earlier run is not drawn again as the tab opens
      const searching = page.key && computedHere("beam_tree") ? "Searching…" : ""; // in the page, for this run
      busy.textContent = computing || searching;
      draw(figure, emptyFigure(computing || searching || message ? "" : "Run a source to search it.", 160));
      summary.textContent = "";
      return;
    }
    fold.checked = folded === null ? message.beam > FOLD_ABOVE : folded;
    const view = {fold: fold.checked, unfolded, picked, current: current(), revision};
    const made = treeFigure(message, nodes, view, figure.clientWidth || 800);
    rows = made.rows;
    const gd = draw(figure, made);
    drawn = [message.parent, fold.checked, folded, unfolded.size, revision, figure.clientWidth];
    onClick(gd, (point) => choose(point.customdata)); // a tap
    if (gd && !gd.__hover) {
      gd.__hover = true;
      gd.on("plotly_hover", (event) => { hovered = (event.points && event.points[0] && event.points[0].customdata) || null; });
      gd.on("plotly_unhover", () => { hovered = null; });
    }
    summary.textContent = treeSummary(message, nodes);
  };
  const choose = (on) => { // a click on a node shows its hypothesis; on a fold mark, unfolds that node's
    const [what, id] = on || [];
    if (what === "mark" && !unfolded.has(id)) {
      unfolded.add(id);
      tree.redraw();
    } else if (what === "node" && id !== picked) {
      picked = id;
      const tell = () => component.trigger("select", {node: id, shown: page.shown});
      if (!pickHere(id, tree.message?.beam ?? treeAsked().beam, tell)) tell();
      ring();
    }
  };
  // A click with the mouse is taken as the button is released, on the point under it (plotly.js, which then works
  // out the click itself, takes a while on a large tree); a press that pans the tree is no click.
  let pressed = null, hovered = null; // where the button went down, and on what (plotly.js unhovers as it does)
  figure.addEventListener("pointerdown", (event) => {
    pressed = event.pointerType === "mouse" ? [event.clientX, event.clientY, hovered] : null; // a tap: plotly_click
  }, true);
  document.addEventListener("pointerup", (event) => { // plotly.js covers the page while the button is down
    const still = pressed && Math.abs(event.clientX - pressed[0]) + Math.abs(event.clientY - pressed[1]) < 4;
    if (still) choose(pressed[2]);
    pressed = null;
  }, true);
  fold.addEventListener("change", () => {
    folded = fold.checked;
    unfolded = new Set();
    redraw();
  });
  document.addEventListener(PICKED_EVENT, (event) => {
    if (event.detail.node === picked) return;
    picked = event.detail.node;
    ring();
  });
  const take = (value, held) => {
    if (held && value.parent === held.parent) return {...value, serial: value.key?.serial ?? value.serial}; // a Step
    [nodes, picked, unfolded] = [treeNodes(value), null, new Set()];
    if (value.key) unpicked(); // a new tree made in the page: no node of it clicked yet
    revision++; // a new tree opens on its first steps
    // made in the page, for the decoding its key names (a tree made ahead for the same tokens may carry another's)
    return value.key ? {...value, serial: value.key.serial} : value;
  };
  // drawn after gradio's own updates of the answer: a large tree takes a moment to draw
  const tree = slowView(component, box, redraw, {take, on: (what) => what === "decoding", seen: figure, later: true,
    here: "beam_tree"});
}
