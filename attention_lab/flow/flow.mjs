// The Flow tab: the shown step's contribution graph (attention_lab/flow/feature.py sends the whole decoding's edges
// once; graph.mjs cuts and prunes each step's), the source at the bottom and the prediction at the top, each edge as
// thick as its weight, the heaviest route from the source drawn over it. The threshold is a control of the page:
// moving it, Show step and the keys redraw with no request. A click on a head's edge focuses that head in the
// Attention tab.

import {el, labelled, openAttentionTab, root} from "../assets/dom.mjs";
import {axisLabels, escapeToken} from "../assets/labels.mjs";
import {draw, emptyFigure, onClick} from "../assets/plot.mjs";
import {madeFrom, slowView} from "../assets/slow.mjs";
import {page, setKind, setLook} from "../assets/store.mjs";
import {computesHere} from "../assets/here.mjs";
import {COLOURS, colourOf, edgeText, heaviestRoute, place, prune, reach, rows, stepGraph, widthOf} from "./graph.mjs";
import {made} from "./in_page.mjs";

computesHere("flow", made); // with the page copy's explanations' graph, the page makes this tab's message

export const DEFAULT_THRESHOLD = 0.04;
const ROW_PX = 26, NARROW = 600;
const LEGEND = [["residual", "residual"], ["ffn", "feed-forward"], ["self", "self-attention head"],
  ["cross", "cross-attention head"], ["route", "heaviest route from the source"]];

/** Whether `message` (the server's Flow message) holds the graph of step `shown` of the decoding `d`: the same run,
 * and the same tokens up to that step (a step's graph reads only those). */
export function flowUsable(message, d, shown) {
  return !!message && message.op === "flow" && madeFrom(message, d, page.key, shown);
}

/** What the tab draws at step `shown` with `threshold`: {graph (pruned), route, kept (share of the prediction the
 * drawn routes from the source carry), edges (how many drawn)} or {empty: why not}. */
export function flowAt(message, shown, threshold) {
  if (message.error) return {empty: message.error};
  if (!shown) return {empty: "Nothing written yet: Step or Run, and the shown step's graph is drawn here."};
  const graph = prune(stepGraph(message, shown), threshold), reached = reach(graph);
  const fromSource = graph.nodes.filter((n) => n.side === 0 && n.level === 0)
    .reduce((total, n) => total + reached.get(n.id), 0);
  return {graph, route: heaviestRoute(graph), fromSource, step: shown, token: message.written[shown - 1], threshold};
}

function segment(x, y, a, b) {
  x.push(a.x, b.x, null);
  y.push(a.y, b.y, null);
}

/** The plotly figure of a state of flowAt: edges grouped by colour and width, the heaviest route over them, a
 * point at each edge's middle (its hover, and its click), the nodes, and the token labels on the axes. */
export function flowFigure(message, state, width = 800) {
  const nodes = new Map(state.graph.nodes.map((n) => [n.id, n])), at = (id) => place(nodes.get(id), message);
  const bend = 0.12 / Math.max(message.source.length, message.written.length, 1);
  const names = rows(message), [Le] = message.layers, S = message.source.length;
  const T = Math.max(1, message.written.length), top = names.length - 1;
  const source = axisLabels(message.source), inputs = axisLabels(message.inputs.slice(0, state.step));
  const groups = new Map();
  for (const edge of state.graph.edges) {
    const key = `${colourOf(edge)} ${widthOf(edge.weight)}`;
    if (!groups.has(key)) groups.set(key, {colour: colourOf(edge), width: widthOf(edge.weight), x: [], y: []});
    const group = groups.get(key), from = at(edge.from), to = at(edge.to);
    if (edge.kind === "ffn") { // beside its residual, which joins the same two streams
      group.x.push(from.x + bend, to.x + bend, null);
      group.y.push(from.y, to.y, null);
    } else segment(group.x, group.y, from, to);
  }
  const data = [...groups.values()].map((g) => ({type: "scatter", mode: "lines", x: g.x, y: g.y, hoverinfo: "skip",
    line: {color: g.colour, width: g.width}, opacity: 0.7, showlegend: false}));
  if (state.route) {
    const x = [], y = [];
    for (const edge of state.route.edges) segment(x, y, at(edge.from), at(edge.to));
    data.push({type: "scatter", mode: "lines", x, y, hoverinfo: "skip", showlegend: false,
      line: {color: COLOURS.route, width: 2, dash: "dot"}});
  }
  const middles = state.graph.edges.map((e) => ({x: (at(e.from).x + at(e.to).x) / 2 + (e.kind === "ffn" ? bend : 0),
    y: (at(e.from).y + at(e.to).y) / 2}));
  data.push({type: "scatter", mode: "markers", x: middles.map((m) => m.x), y: middles.map((m) => m.y),
    customdata: state.graph.edges.map((_, i) => i), hovertext: state.graph.edges.map((e) => edgeText(e, nodes)),
    hoverinfo: "text", marker: {size: 7, color: state.graph.edges.map(colourOf), opacity: 0.35}, showlegend: false});
  const points = state.graph.nodes.map((n) => place(n, message));
  data.push({type: "scatter", mode: "markers", x: points.map((p) => p.x), y: points.map((p) => p.y), hoverinfo: "text",
    hovertext: state.graph.nodes.map((n) => `“${escapeToken(n.label)}”, position ${n.position + 1}`),
    marker: {size: state.graph.nodes.map((n) => (n.side === 2 ? 12 : 6)), color: "#333333"}, showlegend: false});
  data.push({type: "scatter", mode: "markers", xaxis: "x2", x: inputs.map((_, i) => (i + 0.5) / T), // its axis is drawn
    y: inputs.map(() => 2 * Le + 1), marker: {size: 1, opacity: 0}, hoverinfo: "skip", showlegend: false});
  const narrow = width < NARROW;
  const annotations = [{x: place({side: 2, position: state.step - 1}, message).x, y: top, xref: "x", yref: "y",
    text: `“${escapeToken(state.token)}”`, showarrow: false, xanchor: "left", xshift: 10, font: {size: 13}}];
  return {data, layout: {height: (top + 1) * ROW_PX + 110, hovermode: "closest", dragmode: false, plot_bgcolor: "white",
    showlegend: false, margin: {l: narrow ? 78 : 96, r: 16, t: 36, b: 70}, annotations,
    xaxis: {range: [0, 1], tickvals: message.source.map((_, j) => (j + 0.5) / S), ticktext: source, showgrid: false,
      zeroline: false, fixedrange: true, tickfont: {size: narrow ? 9 : 11}},
    xaxis2: {range: [0, 1], overlaying: "x", side: "top", tickvals: inputs.map((_, i) => (i + 0.5) / T),
      ticktext: inputs, showgrid: false, zeroline: false, fixedrange: true, tickfont: {size: narrow ? 9 : 11}},
    yaxis: {range: [-0.6, top + 0.6], tickvals: names.map((_, i) => i), ticktext: names, showgrid: true,
      gridcolor: "#f2f2f2", zeroline: false, fixedrange: true, tickfont: {size: narrow ? 9 : 11}},
    shapes: [{type: "line", xref: "paper", x0: 0, x1: 1, y0: 2 * Le + 0.5, y1: 2 * Le + 0.5,
      line: {color: "#cccccc", width: 1, dash: "dash"}}]}};
}

/** The line above the graph: what it shows at this step and threshold. */
export function flowSummary(state) {
  const edges = state.graph.edges.length - 1; // the prediction's own edge left out
  const route = state.route ? ` The heaviest route from the source starts at “${state.route.label}” (source token `
    + `${state.route.start + 1}; its edges' product ${state.route.weight.toFixed(3)}).`
    : " No route from the source is at or above it.";
  return `Step ${state.step} wrote “${state.token}”: ${edges} edges at or above ${state.threshold.toFixed(2)} lead to it; `
    + `the routes drawn from the source carry ${(100 * state.fromSource).toFixed(0)}% of the prediction.${route}`;
}

/** The head a click on an edge's middle focuses (kind, [layer, head] 0-based), or null for another edge. */
export function clickedHead(edge) {
  return edge && edge.kind === "head" ? {kind: edge.attention, focus: [edge.layer - 1, edge.head - 1]} : null;
}

export function mount(component) {
  const box = root(component.element);
  const busy = el("div", "flow-busy"), line = el("div", "flow-summary"), figure = el("div", "flow-figure");
  const slider = el("input"), value = el("span", "flow-threshold-value");
  Object.assign(slider, {type: "range", min: "0.01", max: "0.3", step: "0.01", value: String(DEFAULT_THRESHOLD)});
  const controls = el("div", "flow-controls");
  controls.append(labelled("Threshold", slider), value);
  const legend = el("div", "flow-legend");
  for (const [kind, name] of LEGEND) {
    const item = el("span", `flow-key flow-key-${kind}`);
    item.append(el("span", "flow-swatch"), name);
    legend.append(item);
  }
  box.replaceChildren(busy, controls, line, legend, figure);
  let drawn = null;
  const view = slowView(component, box, ({message, computing}) => {
    const d = page.decoding, threshold = Number(slider.value);
    value.textContent = threshold.toFixed(2);
    busy.textContent = computing;
    const state = !d ? {empty: "Run or Step to decode."} : flowUsable(message, d, page.shown)
      ? flowAt(message, page.shown, threshold) : {empty: computing || "Open this tab after a Run."};
    drawn = state.empty ? null : state;
    line.textContent = state.empty ? "" : flowSummary(state);
    const gd = draw(figure, state.empty ? emptyFigure(state.empty) : flowFigure(message, state, figure.clientWidth));
    onClick(gd, (point) => {
      const head = drawn && point.customdata !== undefined ? clickedHead(drawn.graph.edges[point.customdata]) : null;
      if (!head) return;
      setKind(head.kind);
      setLook({focus: head.focus});
      openAttentionTab();
    });
  }, {on: (what) => what !== "kind" && what !== "look", here: "flow"});
  slider.addEventListener("input", () => view.redraw());
}
