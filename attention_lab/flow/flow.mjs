// The Flow tab: the shown step's contribution graph (attention_lab/flow/feature.py sends the whole decoding's edges
// once; graph.mjs cuts and prunes each step's), the source at the bottom and the prediction at the top, each edge as
// thick as its weight, the heaviest route from the source drawn over it. Drawn as one SVG (a few milliseconds; plotly
// took 35-45 ms for the same figure, most of a Step's time): a point at each edge's middle says what the edge is when
// the pointer is over it. The threshold is a control of the page:
// moving it, Show step and the keys redraw with no request. A click on a head's edge focuses that head in the
// Attention tab.

import {el, labelled, openAttentionTab, root} from "../assets/dom.mjs";
import {axisLabels, escapeToken, labelPx} from "../assets/labels.mjs";
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

const f1 = (v) => v.toFixed(1);

/** The SVG of a state of flowAt, `width` pixels wide: the streams' rows and their names, the source's tokens below
 * and the decoder's inputs above, the edges (each as thick as its weight, a feed-forward edge beside its residual),
 * the heaviest route over them, a point at each edge's middle (data-edge: its index in the graph's edges) and the
 * nodes (data-node: theirs), the written token beside the prediction. */
export function flowFigure(message, state, width = 800) {
  const nodes = new Map(state.graph.nodes.map((n) => [n.id, n]));
  const bend = 0.12 / Math.max(message.source.length, message.written.length, 1);
  const names = rows(message), [Le] = message.layers, S = message.source.length;
  const T = Math.max(1, message.written.length), top = names.length - 1, narrow = width < NARROW;
  const source = axisLabels(message.source), inputs = axisLabels(message.inputs.slice(0, state.step));
  const font = narrow ? 9 : 11, margin = narrow ? 78 : 96, inner = width - margin - 16;
  // a row of labels turns when it has no room flat, and the margin grows to hold it turned
  const turned = (labels, count) => labelPx(labels, font * 0.6) > inner / Math.max(1, count);
  const depth = (labels, count) => (turned(labels, count) ? Math.ceil(0.71 * labelPx(labels, font * 0.6)) : font) + 16;
  const m = {l: margin, r: 16, t: Math.max(36, depth(inputs, T)), b: Math.max(70, depth(source, S))};
  const height = (top + 1) * ROW_PX + 4 + m.t + m.b;
  const px = (x) => m.l + x * (width - m.l - m.r);
  const py = (y) => m.t + ((top + 0.6 - y) / (top + 1.2)) * (height - m.t - m.b);
  const at = (id, shift = 0) => {
    const p = place(nodes.get(id), message);
    return {x: px(p.x + shift), y: py(p.y)};
  };
  const line = (a, b, attributes) => `<line x1="${f1(a.x)}" y1="${f1(a.y)}" x2="${f1(b.x)}" y2="${f1(b.y)}" ${attributes}/>`;
  const parts = names.map((name, i) => line({x: m.l, y: py(i)}, {x: width - m.r, y: py(i)}, 'class="flow-grid"')
    + `<text class="flow-row" x="${m.l - 6}" y="${f1(py(i) + 4)}">${escapeToken(name)}</text>`);
  parts.push(line({x: m.l, y: py(2 * Le + 0.5)}, {x: width - m.r, y: py(2 * Le + 0.5)}, 'class="flow-divide"'));
  const axis = (labels, count, y, side) => {
    const turn = turned(labels, count);
    return labels.map((label, i) => {
      const x = f1(px((i + 0.5) / count)), rotation = turn ? ` transform="rotate(-45 ${x} ${y})"` : "";
      const anchor = turn ? (side === "top" ? "start" : "end") : "middle";
      return `<text class="flow-tick" x="${x}" y="${y}" text-anchor="${anchor}"${rotation}>${label}</text>`;
    }).join("");
  };
  parts.push(axis(source, S, height - m.b + 16, "bottom"), axis(inputs, T, m.t - 10, "top"));
  const ends = state.graph.edges.map((e) => {
    const shift = e.kind === "ffn" ? bend : 0; // beside its residual, which joins the same two streams
    return [at(e.from, shift), at(e.to, shift)];
  });
  state.graph.edges.forEach((e, i) => parts.push(line(...ends[i],
    `class="flow-edge" stroke="${colourOf(e)}" stroke-width="${widthOf(e.weight)}"`)));
  for (const e of state.route?.edges ?? []) parts.push(line(at(e.from), at(e.to), `class="flow-route" stroke="${COLOURS.route}"`));
  state.graph.edges.forEach((e, i) => {
    const [a, b] = ends[i];
    parts.push(`<circle class="flow-middle" data-edge="${i}" cx="${f1((a.x + b.x) / 2)}" cy="${f1((a.y + b.y) / 2)}" `
      + `r="3.5" fill="${colourOf(e)}"/>`);
  });
  for (const n of state.graph.nodes) {
    const p = at(n.id);
    parts.push(`<circle class="flow-node" data-node="${n.id}" cx="${f1(p.x)}" cy="${f1(p.y)}" r="${n.side === 2 ? 6 : 3}"/>`);
  }
  const written = px(place({side: 2, position: state.step - 1}, message).x), said = `“${escapeToken(state.token)}”`;
  const left = written + 10 + 8 * [...state.token].length + 16 > width; // no room on its right: on its left
  parts.push(`<text class="flow-written" x="${f1(left ? written - 10 : written + 10)}" y="${f1(py(top) + 5)}" `
    + `text-anchor="${left ? "end" : "start"}">${said}</text>`);
  return `<svg class="flow-svg" xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" `
    + `viewBox="0 0 ${width} ${height}" font-size="${font}">${parts.join("")}</svg>`;
}

/** What the pointer over `target` (an element of the figure) is shown: the edge's or the node's words, or null. */
export function tipOf(target, state) {
  const edge = target.closest?.("[data-edge]"), node = target.closest?.("[data-node]");
  const nodes = new Map(state.graph.nodes.map((n) => [n.id, n]));
  if (edge) return edgeText(state.graph.edges[Number(edge.dataset.edge)], nodes);
  if (node) {
    const n = nodes.get(node.dataset.node);
    return n ? `“${escapeToken(n.label)}”, position ${n.position + 1}` : null;
  }
  return null;
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
  const tip = el("div", "flow-tip");
  box.replaceChildren(busy, controls, line, legend, figure);
  let drawn = null;
  figure.addEventListener("mouseover", (event) => {
    const said = drawn && tipOf(event.target, drawn);
    if (!said) return void tip.remove();
    tip.innerHTML = said; // edgeText escapes the tokens it names
    const box = figure.getBoundingClientRect(), at = event.target.getBoundingClientRect();
    tip.style.setProperty("--tip-left", `${at.left - box.left + figure.scrollLeft + 10}px`); // flow.css
    tip.style.setProperty("--tip-top", `${at.top - box.top + 10}px`);
    figure.append(tip);
  });
  figure.addEventListener("mouseleave", () => tip.remove());
  figure.addEventListener("click", (event) => {
    const edge = drawn && event.target.closest("[data-edge]");
    const head = edge ? clickedHead(drawn.graph.edges[Number(edge.dataset.edge)]) : null;
    if (!head) return;
    setKind(head.kind);
    setLook({focus: head.focus});
    openAttentionTab();
  });
  const view = slowView(component, box, ({message, computing}) => {
    const d = page.decoding, threshold = Number(slider.value);
    value.textContent = threshold.toFixed(2);
    busy.textContent = computing;
    const state = !d ? {empty: "Run or Step to decode."} : flowUsable(message, d, page.shown)
      ? flowAt(message, page.shown, threshold) : {empty: computing || "Open this tab after a Run."};
    drawn = state.empty ? null : state;
    line.textContent = state.empty ? "" : flowSummary(state);
    if (state.empty) {
      figure.replaceChildren(el("div", "flow-empty"));
      figure.firstChild.textContent = state.empty;
    } else {
      figure.innerHTML = flowFigure(message, state, figure.clientWidth || 800);
    }
  }, {on: (what) => what !== "kind" && what !== "look", here: "flow"});
  slider.addEventListener("input", () => view.redraw());
}
