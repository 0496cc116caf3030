import assert from "node:assert/strict";
import {test} from "node:test";

import {clickedHead, flowAt, flowFigure, flowSummary, flowUsable, tipOf} from "../../attention_lab/flow/flow.mjs";
import {edgeRows, heaviestRoute, place, prune, reach, rows, stepGraph, streamOf, widthOf}
  from "../../attention_lab/flow/graph.mjs";
import {page} from "../../attention_lab/assets/store.mjs";
import {valid} from "./messages.mjs";

// One layer on each side, one head, two source tokens and two steps, weights made up so that the edges into each
// node add up to 1 (an edge under the floor, 0.01, is not sent). Levels: the encoder's 0 embeddings, 1 self, 2 ffn;
// the decoder's 0 embeddings, 1 self, 2 cross, 3 ffn. An edge: [to side, level, position, from side, level,
// position, kind (0 residual, 1 head, 2 ffn), head, weight].
const EDGES = [
  [0, 1, 0, 0, 0, 0, 0, 0, 0.6], [0, 1, 0, 0, 0, 0, 1, 1, 0.1], [0, 1, 0, 0, 0, 1, 1, 1, 0.3],
  [0, 1, 1, 0, 0, 1, 0, 0, 0.55], [0, 1, 1, 0, 0, 0, 1, 1, 0.45],
  [0, 2, 0, 0, 1, 0, 0, 0, 0.7], [0, 2, 0, 0, 1, 0, 2, 0, 0.3], [0, 2, 1, 0, 1, 1, 0, 0, 0.8], [0, 2, 1, 0, 1, 1, 2, 0, 0.2],
  [1, 1, 0, 1, 0, 0, 0, 0, 0.9], [1, 1, 0, 1, 0, 0, 1, 1, 0.1],
  [1, 1, 1, 1, 0, 1, 0, 0, 0.5], [1, 1, 1, 1, 0, 0, 1, 1, 0.3], [1, 1, 1, 1, 0, 1, 1, 1, 0.2],
  [1, 2, 0, 1, 1, 0, 0, 0, 0.4], [1, 2, 0, 0, 2, 0, 1, 1, 0.5], [1, 2, 0, 0, 2, 1, 1, 1, 0.1],
  [1, 2, 1, 1, 1, 1, 0, 0, 0.2], [1, 2, 1, 0, 2, 1, 1, 1, 0.8],
  [1, 3, 0, 1, 2, 0, 0, 0, 0.5], [1, 3, 0, 1, 2, 0, 2, 0, 0.5], [1, 3, 1, 1, 2, 1, 0, 0, 0.6], [1, 3, 1, 1, 2, 1, 2, 0, 0.4],
];

/** Rows of [to side, level, position, from side, level, position, kind, head, weight] packed as the server packs
 * them (attention_lab/flow/messages.py): 8 little-endian bytes an edge, nodes numbered level · S + position in the
 * encoder, then (2 · Le + 1) · S + level · T + position in the decoder. */
function packed(rows, S, T, Le) {
  const number = (side, level, position) => (side === 0 ? level * S + position : (2 * Le + 1) * S + level * T + position);
  const view = new DataView(new ArrayBuffer(8 * rows.length));
  rows.forEach(([ts, tl, tp, fs, fl, fp, kind, head, weight], i) => {
    view.setUint16(8 * i, number(ts, tl, tp), true);
    view.setUint16(8 * i + 2, number(fs, fl, fp), true);
    view.setUint16(8 * i + 4, Math.round(weight * 65535), true);
    view.setUint8(8 * i + 6, kind);
    view.setUint8(8 * i + 7, head);
  });
  return Buffer.from(view.buffer).toString("base64");
}

const MESSAGE = valid({op: "flow", key: {serial: 2, version: 5}, tokens: [7, 2], layers: [1, 1], heads: 1,
  source: ["b", "</s>"], inputs: ["<s>", "b"], written: ["b", "</s>"], floor: 0.01, count: EDGES.length,
  edges: packed(EDGES, 2, 2, 1)});
const NEAR = 1e-4; // weights travel as 16-bit integers: within 1 / 65535 each

test("the packed edges read back as the rows they were made of", () => {
  const rows = edgeRows(MESSAGE);
  assert.equal(rows.length, EDGES.length);
  rows.forEach((row, i) => {
    assert.deepEqual(row.slice(0, 8), EDGES[i].slice(0, 8));
    assert.ok(Math.abs(row[8] - EDGES[i][8]) <= 0.5 / 65535);
  });
  assert.equal(edgeRows(MESSAGE), rows); // read once per message
});

test("a stream's layer and sublayer follow from its level", () => {
  assert.deepEqual(streamOf(0, 0), {layer: 0, sublayer: null});
  assert.deepEqual([1, 2, 3, 4].map((l) => streamOf(0, l).sublayer), ["self", "ffn", "self", "ffn"]);
  assert.deepEqual([1, 2, 3, 4].map((l) => [streamOf(1, l).layer, streamOf(1, l).sublayer]),
    [[1, "self"], [1, "cross"], [1, "ffn"], [2, "self"]]);
  assert.deepEqual(rows(MESSAGE), ["source", "enc 1 self", "enc 1 ffn", "decoder in", "dec 1 self", "dec 1 cross",
    "dec 1 ffn", "prediction"]);
});

test("a step's graph holds the decoder's positions up to it, and the edges into each node add up to 1", () => {
  const first = stepGraph(MESSAGE, 1), second = stepGraph(MESSAGE, 2);
  assert.equal(first.nodes.length, 2 * 3 + 1 * 4 + 1);
  assert.equal(second.nodes.length, 2 * 3 + 2 * 4 + 1);
  assert.ok(first.edges.every((e) => !e.to.startsWith("1.") || e.to.endsWith(".0")));
  assert.deepEqual(first.edges.at(-1), {from: "1.3.0", to: "prediction", kind: "residual", layer: null, head: null,
    weight: 1, attention: null});
  assert.ok(second.edges.every((e) => e.weight >= 0.01)); // the floor: no edge of 0 is sent
  const into = new Map();
  for (const e of second.edges) into.set(e.to, (into.get(e.to) || 0) + e.weight);
  for (const node of second.nodes) {
    if (node.level === 0 && node.side !== 2) assert.ok(!into.has(node.id));
    else assert.ok(Math.abs(into.get(node.id) - 1) < NEAR, node.id);
  }
  const cross = second.edges.filter((e) => e.attention === "cross");
  assert.equal(cross.length, 3);
  assert.ok(cross.every((e) => e.from.startsWith("0.2.") && e.layer === 1 && e.head === 1));
});

test("the routes' totals, worked out by hand", () => {
  // step 2: the prediction takes all of dec 1 ffn at 1, which takes all of dec 1 cross at 1 (0.6 + 0.4); that takes
  // 0.8 from enc 1 ffn at 1 (all of enc 1 self at 1: 0.8 + 0.2), which takes 0.55 of its own embedding and 0.45 of
  // source 0's: 0.44 and 0.36; and 0.2 from dec 1 self at 1: its embedding 0.5 + 0.2 -> 0.14, the start's 0.3 -> 0.06
  const reached = reach(stepGraph(MESSAGE, 2));
  const near = (a, b) => assert.ok(Math.abs(a - b) < NEAR, `${a} vs ${b}`);
  near(reached.get("0.0.1"), 0.44);
  near(reached.get("0.0.0"), 0.36);
  near(reached.get("1.0.1"), 0.14);
  near(reached.get("1.0.0"), 0.06);
  // the heaviest route from the source: source 1 (0.55 x 0.8 x 0.8 x 0.6 x 1 = 0.2112) over source 0 (0.45 x ...)
  const route = heaviestRoute(stepGraph(MESSAGE, 2));
  assert.equal(route.start, 1);
  assert.equal(route.label, "</s>");
  near(route.weight, 0.55 * 0.8 * 0.8 * 0.6);
  assert.deepEqual(route.edges.map((e) => e.to), ["0.1.1", "0.2.1", "1.2.1", "1.3.1", "prediction"]);
});

test("pruning keeps, from the prediction down, the edges of at least the threshold", () => {
  const kept = prune(stepGraph(MESSAGE, 2), 0.25);
  assert.deepEqual(kept.nodes.map((n) => n.id).sort(),
    ["0.0.0", "0.0.1", "0.1.1", "0.2.1", "1.2.1", "1.3.1", "prediction"]);
  assert.deepEqual(kept.edges.map((e) => Math.round(e.weight * 100) / 100).sort(), [0.4, 0.45, 0.55, 0.6, 0.8, 0.8, 1]);
  // at the floor, every edge but the 12 into the streams at position 0 above the embeddings and the encoder's first
  // layer: at step 2 they lead nowhere (the last position's streams and the encoder's at position 1 carry it all)
  assert.equal(stepGraph(MESSAGE, 2).edges.length, 24);
  assert.equal(prune(stepGraph(MESSAGE, 2), 0.01).edges.length, 12);
  assert.equal(prune(stepGraph(MESSAGE, 2), 1).edges.length, 1); // only the prediction's own edge
});

test("the figure draws every kept edge once, its middle named, and the source's labels on the axis", () => {
  const state = flowAt(MESSAGE, 2, 0.25);
  const svg = flowFigure(MESSAGE, state, 800), count = (pattern) => (svg.match(pattern) || []).length;
  assert.equal(count(/class="flow-edge"/g), state.graph.edges.length);
  assert.equal(count(/class="flow-route"/g), state.route.edges.length);
  const middles = [...svg.matchAll(/data-edge="(\d+)"/g)].map((m) => Number(m[1]));
  assert.deepEqual(middles, state.graph.edges.map((_, i) => i));
  assert.equal(count(/class="flow-node"/g), state.graph.nodes.length);
  const ticks = [...svg.matchAll(/class="flow-tick"[^>]*>([^<]*)</g)].map((m) => m[1]);
  assert.deepEqual(ticks.slice(0, 2), ["b", "&lt;/s&gt;"]); // the source, then the decoder's inputs up to the step
  const widths = [...svg.matchAll(/stroke-width="([\d.]+)"/g)].map((m) => Number(m[1]));
  assert.deepEqual(new Set(widths), new Set(state.graph.edges.map((e) => widthOf(e.weight))));
  assert.ok(widthOf(0.9) > widthOf(0.3) && widthOf(0.3) > widthOf(0.02));
  // the source below the decoder, the prediction above both
  const ys = state.graph.nodes.map((n) => place(n, MESSAGE).y);
  assert.equal(Math.max(...ys), place({side: 2, position: 1}, MESSAGE).y);
  assert.ok(place({side: 0, level: 2, position: 0}, MESSAGE).y < place({side: 1, level: 0, position: 0}, MESSAGE).y);
  // the ffn edge of 0.2 is pruned, so the source's routes drawn carry 0.8 x 0.8 of the prediction
  assert.match(flowSummary(state), /Step 2 wrote “<\/s>”: 6 edges at or above 0\.25 .* carry 64% .* starts at “<\/s>”/);
});

test("the pointer over an edge's middle or a node says what it is", () => {
  const state = flowAt(MESSAGE, 2, 0.25);
  const at = (data) => ({closest: (selector) => (selector.slice(6, -1) in data ? {dataset: data} : null)});
  const head = state.graph.edges.findIndex((e) => e.kind === "head");
  assert.match(tipOf(at({edge: String(head)}), state), /head L1 H1: 0\.\d{3}<br>from “.*” to “.*”/);
  const node = state.graph.nodes[0];
  assert.equal(tipOf(at({node: node.id}), state), `“${node.label}”, position ${node.position + 1}`);
  assert.equal(tipOf(at({}), state), null);
});

test("a click on a head's edge focuses that head in its kind, on another edge nothing", () => {
  const edges = stepGraph(MESSAGE, 2).edges;
  assert.deepEqual(clickedHead(edges.find((e) => e.attention === "cross")), {kind: "cross", focus: [0, 0]});
  assert.deepEqual(clickedHead(edges.find((e) => e.attention === "decoder_self")), {kind: "decoder_self", focus: [0, 0]});
  assert.equal(clickedHead(edges.find((e) => e.kind === "ffn")), null);
});

test("a message is drawn for its own run's tokens up to the shown step", () => {
  const decoding = {steps: [{token: 7}, {token: 2}]};
  page.key = {serial: 2, version: 6};
  assert.ok(flowUsable(MESSAGE, decoding, 2));
  assert.ok(flowUsable(MESSAGE, {steps: [{token: 7}, {token: 9}]}, 1)); // a what-if after step 1: step 1 is the same
  assert.ok(!flowUsable(MESSAGE, {steps: [{token: 7}, {token: 9}]}, 2));
  assert.ok(!flowUsable(MESSAGE, {steps: [{token: 7}, {token: 2}, {token: 3}]}, 3)); // a step it does not hold
  page.key = {serial: 3, version: 1};
  assert.ok(!flowUsable(MESSAGE, decoding, 1)); // another run
  page.key = null;
  assert.deepEqual(flowAt({...MESSAGE, error: "No graph"}, 1, 0.04), {empty: "No graph"});
  assert.match(flowAt(MESSAGE, 0, 0.04).empty, /Nothing written yet/);
});
