// The contribution graph of one step, cut from the whole decoding's edges the server sends once
// (attention_lab/flow/messages.py, FlowMessage), pruned by a threshold as transformer/flow.py prunes it, and laid out
// for plotly: the source at the bottom, the decoder above it, the prediction at the top.

import {base64Bytes} from "../assets/decoding.mjs";
import {escapeToken} from "../assets/labels.mjs";

export const PREDICTION = "prediction";
const KINDS = ["residual", "head", "ffn"];
const SUBLAYERS = [["self", "ffn"], ["self", "cross", "ffn"]]; // a layer's streams, in order: encoder, decoder
export const COLOURS = {residual: "#9e9e9e", ffn: "#e08214", self: "#2166ac", cross: "#7b3294", route: "#111111"};
const WIDTHS = [[0.65, 7], [0.35, 5], [0.15, 3.5], [0.05, 2], [0, 1]]; // [weight at least, line width]

/** A node's id: side (0 encoder, 1 decoder), level (0 the embeddings, then each sublayer's stream) and position. */
export const nodeId = (side, level, position) => `${side}.${level}.${position}`;

/** What the stream at (side, level) is: its layer (1-based; 0 for the embeddings) and sublayer (null there). */
export function streamOf(side, level) {
  if (level === 0) return {layer: 0, sublayer: null};
  const per = SUBLAYERS[side].length;
  return {layer: Math.ceil(level / per), sublayer: SUBLAYERS[side][(level - 1) % per]};
}

const unpacked = new WeakMap(); // message -> its edges as [toSide, toLevel, toPos, fromSide, fromLevel, fromPos, kind, head, weight]

/** The message's packed edges (FlowMessage in attention_lab/flow/messages.py: 8 little-endian bytes each) as rows of
 * [toSide, toLevel, toPos, fromSide, fromLevel, fromPos, kind, head, weight], read once per message. */
export function edgeRows(message) {
  if (unpacked.has(message)) return unpacked.get(message);
  const [Le] = message.layers, S = message.source.length, T = Math.max(1, message.tokens.length);
  const encoder = (2 * Le + 1) * S, view = new DataView(base64Bytes(message.edges).buffer), rows = [];
  const where = (n) => (n < encoder ? [0, Math.floor(n / S), n % S] : [1, Math.floor((n - encoder) / T), (n - encoder) % T]);
  for (let i = 0; i < message.count; i++) {
    const at = 8 * i;
    rows.push([...where(view.getUint16(at, true)), ...where(view.getUint16(at + 2, true)), view.getUint8(at + 6),
      view.getUint8(at + 7), view.getUint16(at + 4, true) / 65535]);
  }
  unpacked.set(message, rows);
  return rows;
}

/** Step `step`'s (1-based) whole graph in the message (its edges at or above the message's floor): {nodes, edges},
 * nodes bottom up ({id, side, level, layer, sublayer, position, label}), the prediction last; edges ({from, to, kind,
 * layer, head, weight, attention: "encoder", "decoder_self" or "cross" for a head's}) into them. */
export function stepGraph(message, step) {
  const [Le, Ld] = message.layers, S = message.source.length, nodes = [];
  const add = (side, levels, positions, labels) => {
    for (let level = 0; level <= levels; level++) {
      for (let p = 0; p < positions; p++) nodes.push({id: nodeId(side, level, p), side, level, ...streamOf(side, level),
        position: p, label: labels[p]});
    }
  };
  add(0, 2 * Le, S, message.source);
  add(1, 3 * Ld, step, message.inputs);
  nodes.push({id: PREDICTION, side: 2, level: 0, layer: null, sublayer: null, position: step - 1,
    label: message.written[step - 1]});
  const edges = [];
  for (const [toSide, toLevel, toPos, fromSide, fromLevel, fromPos, kind, head, weight] of edgeRows(message)) {
    if (toSide === 1 && toPos >= step) continue;
    const {layer, sublayer} = streamOf(toSide, toLevel), name = KINDS[kind];
    const attention = name !== "head" ? null : toSide === 0 ? "encoder" : sublayer === "cross" ? "cross" : "decoder_self";
    edges.push({from: nodeId(fromSide, fromLevel, fromPos), to: nodeId(toSide, toLevel, toPos), kind: name, layer,
      head: head || null, weight, attention});
  }
  edges.push({from: nodeId(1, 3 * Ld, step - 1), to: PREDICTION, kind: "residual", layer: null, head: null, weight: 1,
    attention: null});
  return {nodes, edges};
}

function into(graph) {
  const found = new Map();
  for (const edge of graph.edges) {
    if (!found.has(edge.to)) found.set(edge.to, []);
    found.get(edge.to).push(edge);
  }
  return found;
}

/** From the prediction down, the edges of at least `threshold` into a node kept and the nodes they come from. */
export function prune(graph, threshold) {
  const incoming = into(graph), kept = new Set([PREDICTION]), edges = [];
  for (let i = graph.nodes.length - 1; i >= 0; i--) { // top down: every edge goes up
    const node = graph.nodes[i];
    if (!kept.has(node.id)) continue;
    for (const edge of incoming.get(node.id) || []) {
      if (edge.weight < threshold) continue;
      edges.push(edge);
      kept.add(edge.from);
    }
  }
  return {nodes: graph.nodes.filter((n) => kept.has(n.id)), edges: edges.reverse()};
}

/** Per node id: the summed weight of every route from it to the prediction in `graph`. */
export function reach(graph) {
  const incoming = into(graph), out = new Map(graph.nodes.map((n) => [n.id, 0]));
  out.set(PREDICTION, 1);
  for (let i = graph.nodes.length - 1; i >= 0; i--) {
    const id = graph.nodes[i].id;
    for (const edge of incoming.get(id) || []) out.set(edge.from, out.get(edge.from) + edge.weight * out.get(id));
  }
  return out;
}

/** The route from a source token (an encoder embedding) to the prediction whose edges' product is largest:
 * {edges, weight}, or null where no route from the source is in `graph`. */
export function heaviestRoute(graph) {
  const incoming = into(graph), best = new Map([[PREDICTION, [1, null]]]);
  for (let i = graph.nodes.length - 1; i >= 0; i--) {
    const id = graph.nodes[i].id;
    if (!best.has(id)) continue;
    const weight = best.get(id)[0];
    for (const edge of incoming.get(id) || []) {
      const through = edge.weight * weight;
      if (!best.has(edge.from) || through > best.get(edge.from)[0]) best.set(edge.from, [through, edge]);
    }
  }
  const starts = graph.nodes.filter((n) => n.side === 0 && n.level === 0 && best.has(n.id));
  if (!starts.length) return null;
  const start = starts.reduce((a, b) => (best.get(b.id)[0] > best.get(a.id)[0] ? b : a));
  const edges = [];
  for (let at = start.id; best.get(at)[1]; at = best.get(at)[1].to) edges.push(best.get(at)[1]);
  return {edges, weight: best.get(start.id)[0], start: start.position, label: start.label};
}

/** The line width an edge of `weight` is drawn with. */
export function widthOf(weight) {
  return WIDTHS.find(([least]) => weight >= least)[1];
}

/** Where each node is drawn: x in [0, 1] by its position among its side's (`T` decoder positions in the whole
 * decoding, so a node stays put from step to step), y by its stream, the encoder's below the decoder's. */
export function place(node, message) {
  const [Le, Ld] = message.layers, S = message.source.length, T = Math.max(1, message.written.length);
  if (node.side === 0) return {x: (node.position + 0.5) / S, y: node.level};
  if (node.side === 1) return {x: (node.position + 0.5) / T, y: 2 * Le + 1 + node.level};
  return {x: (node.position + 0.5) / T, y: 2 * Le + 3 * Ld + 2};
}

/** The y axis's rows: each stream's name, bottom up. */
export function rows(message) {
  const [Le, Ld] = message.layers, names = ["source"];
  for (let level = 1; level <= 2 * Le; level++) names.push(`enc ${Math.ceil(level / 2)} ${SUBLAYERS[0][(level - 1) % 2]}`);
  names.push("decoder in");
  for (let level = 1; level <= 3 * Ld; level++) names.push(`dec ${Math.ceil(level / 3)} ${SUBLAYERS[1][(level - 1) % 3]}`);
  names.push("prediction");
  return names;
}

/** An edge's colour: a residual's, a feed-forward block's, a self-attention head's or a cross head's. */
export function colourOf(edge) {
  return edge.kind === "head" ? COLOURS[edge.attention === "cross" ? "cross" : "self"] : COLOURS[edge.kind];
}

/** An edge in words, for its hover. */
export function edgeText(edge, nodes) {
  const what = edge.kind === "head" ? `${{encoder: "encoder self", decoder_self: "decoder self", cross: "cross"}[edge.attention]}`
    + ` head L${edge.layer} H${edge.head}` : edge.kind === "ffn" ? `feed-forward, layer ${edge.layer}`
      : edge.layer === null ? "the output layer" : `residual, layer ${edge.layer}`;
  const from = nodes.get(edge.from), to = nodes.get(edge.to);
  return `${what}: ${edge.weight.toFixed(3)}<br>from “${escapeToken(from.label)}” to “${escapeToken(to.label)}”`;
}
