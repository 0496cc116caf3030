import assert from "node:assert/strict";
import {test} from "node:test";

import {decodingPath, finishedScore, ofRun, pathTo, rings, treeFigure, treeLayout, treeNodes, treeSummary}
  from "../../attention_lab/beam_tree/tree.mjs";
import {valid} from "./messages.mjs";

/** A tree message as attention_lab/beam_tree/feature.py sends it (a column per field, a value per node) from rows of
 * [parent, step, token, label, logp, total, state]. */
function message(rows, extra = {}) {
  const column = (i) => rows.map((row) => row[i]);
  return valid({op: "tree", parent: column(0), step: column(1), token: column(2), label: column(3), logp: column(4),
    total: column(5), state: column(6).join(""), beam: 2, alpha: 0.6, best: 0, text: "", serial: 3, ...extra});
}

// Children out of id order, a tie (12 and 14), and pruned leaves under every kind of node. Node 11 ("a e </s>") is
// the best hypothesis.
const SMALL = message([
  [-1, 0, 1, "<s>", 0, 0, "k"],
  [0, 1, 11, "b", -1.0, -1.0, "k"], [0, 1, 10, "a", -0.2, -0.2, "k"], [0, 1, 13, "d", -3.0, -3.0, "p"],
  [0, 1, 12, "c", -2.5, -2.5, "p"],
  [2, 2, 21, "f", -2.0, -2.2, "p"], [2, 2, 20, "e", -0.1, -0.3, "k"],
  [1, 2, 23, "h", -3.0, -4.0, "p"], [1, 2, 2, "</s>", -0.3, -1.3, "f"], [1, 2, 22, "g", -0.5, -1.5, "k"],
  [6, 3, 24, "i", -1.5, -1.8, "p"], [6, 3, 2, "</s>", -0.05, -0.35, "f"],
  [9, 3, 25, "j", -2.2, -3.7, "p"], [9, 3, 2, "</s>", -0.4, -1.9, "f"], [9, 3, 26, "k", -2.2, -3.7, "p"],
], {best: 11, text: "a e"});
const PRUNED = [3, 4, 5, 7, 10, 12, 14];

/** A made-up beam search of `steps` steps: every kept node of a step has 1 to 4 children, of which the `beam` likeliest
 * of the step are kept (or finish, the end token), the rest pruned (leaves, as in a real search). */
function searched(seed, steps = 6, beam = 3) {
  let state = seed;
  const random = () => ((state = (state * 1103515245 + 12345) % 2147483648) / 2147483648);
  const rows = [[-1, 0, 1, "<s>", 0, 0, "k"]];
  let live = [0];
  for (let step = 1; step <= steps && live.length; step++) {
    const born = [];
    for (const parent of live) {
      const n = 1 + Math.floor(4 * random());
      for (let c = 0; c < n; c++) {
        const logp = -Math.round(40 * random()) / 10; // ties happen
        born.push(rows.length);
        rows.push([parent, step, 10 + c, `t${rows.length}`, logp, rows[parent][5] + logp, "p"]);
      }
    }
    born.sort((a, b) => rows[b][5] - rows[a][5]);
    live = [];
    for (const id of born.slice(0, beam)) {
      const ends = random() < 0.25 || step === steps;
      rows[id][6] = ends ? "f" : "k";
      if (!ends) live.push(id);
    }
  }
  return message(rows, {beam});
}

const TREES = [SMALL, ...[1, 2, 3, 4, 5].map((seed) => searched(seed))];

/** The drawn nodes of each step in row order, as ids ("+" and its parent's id for a mark). */
function columns(layout, nodes) {
  const cells = [];
  for (const [id, row] of layout.rows) (cells[nodes[id].step] ||= [])[row] = id;
  for (const m of layout.marks) (cells[m.step] ||= [])[m.row] = `+${m.parent}`;
  return cells;
}

test("the nodes are in id order, each with its children likeliest first (ties by id)", () => {
  const nodes = treeNodes(SMALL);
  assert.deepEqual(nodes.map((n) => n.id), [...Array(15).keys()]);
  assert.equal(nodes[0].parent, null);
  assert.deepEqual(nodes[0].children.map((c) => c.id), [2, 1, 4, 3]);
  assert.deepEqual(nodes[9].children.map((c) => c.id), [13, 12, 14]);
  assert.deepEqual([nodes[11].label, nodes[11].state, nodes[11].total], ["</s>", "f", -0.35]);
});

test("unfolded, every node is drawn once, one per cell, each node's children together and likeliest first", () => {
  for (const m of TREES) {
    const nodes = treeNodes(m), layout = treeLayout(nodes, false);
    assert.equal(layout.rows.size, nodes.length);
    assert.equal(new Set([...layout.rows].map(([id, row]) => `${nodes[id].step}:${row}`)).size, nodes.length);
    assert.deepEqual(layout.marks, []);
    const cells = columns(layout, nodes);
    cells.forEach((column, step) => {
      assert.equal(column.length, column.filter((id) => id !== undefined).length); // no empty row between
      if (!step) return;
      // the parents in the order they are drawn, each once: its children in one run, under its row order
      const parents = column.map((id) => nodes[id].parent);
      const runs = parents.filter((p, i) => p !== parents[i - 1]);
      assert.equal(new Set(runs).size, runs.length);
      assert.deepEqual(runs, [...runs].sort((a, b) => layout.rows.get(a) - layout.rows.get(b)));
      for (let i = 1; i < column.length; i++) {
        if (parents[i] === parents[i - 1]) assert.ok(nodes[column[i]].logp <= nodes[column[i - 1]].logp);
      }
    });
    assert.equal(layout.height, Math.max(...cells.map((c) => c.length)));
  }
  assert.deepEqual(columns(treeLayout(treeNodes(SMALL), false), treeNodes(SMALL)),
    [[0], [2, 1, 4, 3], [6, 5, 8, 9, 7], [11, 10, 13, 12, 14]]);
});

test("folded, exactly the pruned nodes are hidden, in a +n mark per node that counts its own", () => {
  for (const m of TREES) {
    const nodes = treeNodes(m), layout = treeLayout(nodes, true);
    const pruned = nodes.filter((n) => n.state === "p").map((n) => n.id);
    assert.deepEqual([...layout.rows.keys()].sort((a, b) => a - b),
      nodes.filter((n) => n.state !== "p").map((n) => n.id));
    assert.deepEqual(layout.marks.flatMap((mark) => mark.ids).sort((a, b) => a - b), pruned);
    for (const mark of layout.marks) {
      assert.deepEqual(mark.ids, nodes[mark.parent].children.filter((c) => c.state === "p").map((c) => c.id));
      assert.equal(mark.step, nodes[mark.parent].step + 1);
    }
    const cells = [...layout.rows].map(([id, row]) => `${nodes[id].step}:${row}`)
      .concat(layout.marks.map((mark) => `${mark.step}:${mark.row}`));
    assert.equal(new Set(cells).size, cells.length); // a mark has a cell of its own too
    const figure = treeFigure(m, nodes, {fold: true, unfolded: new Set(), picked: null, current: [], revision: 0}, 800);
    if (layout.marks.length) {
      assert.deepEqual(figure.data.at(-1).text, layout.marks.map((mark) => `+${mark.ids.length}`));
    } else assert.ok(figure.data.every((trace) => !(trace.customdata || []).some(([what]) => what === "mark")));
  }
  const nodes = treeNodes(SMALL);
  assert.deepEqual(columns(treeLayout(nodes, true), nodes), [[0], [2, 1, "+0"], [6, "+2", 8, 9, "+1"],
    [11, "+6", 13, "+9"]]);
  assert.deepEqual(PRUNED, nodes.filter((n) => n.state === "p").map((n) => n.id));
});

test("unfolding a node shows exactly its pruned children, the rest folded as before", () => {
  for (const m of TREES) {
    const nodes = treeNodes(m), folded = treeLayout(nodes, true);
    for (const mark of folded.marks) {
      const opened = treeLayout(nodes, true, new Set([mark.parent]));
      const more = [...opened.rows.keys()].filter((id) => !folded.rows.has(id));
      assert.deepEqual(more.sort((a, b) => a - b), [...mark.ids].sort((a, b) => a - b));
      assert.deepEqual(opened.marks.map((x) => x.parent), folded.marks.map((x) => x.parent).filter((p) => p !== mark.parent));
    }
  }
  const nodes = treeNodes(SMALL);
  assert.deepEqual(columns(treeLayout(nodes, true, new Set([9])), nodes)[3], [11, "+6", 13, 12, 14]);
});

test("a finished hypothesis's score is GNMT's total / ((5 + length) / 6)^alpha", () => {
  assert.equal(finishedScore(-3.5, 7, 1), -3.5 / 2); // ((5 + 7) / 6)^1 = 2
  assert.ok(Math.abs(finishedScore(-3.5, 7, 0.6) - -3.5 / 1.515716566510398) < 1e-12); // 2^0.6
  assert.ok(Math.abs(finishedScore(-2, 31, 0.6) - -2 / 2.930156051583521) < 1e-12); // 6^0.6
  assert.equal(finishedScore(-2, 31, 1), -2 / 6);
  assert.equal(finishedScore(-1.25, 1, 0.6), -1.25); // one token: no penalty
  const nodes = treeNodes(SMALL), view = {fold: false, unfolded: new Set(), picked: null, current: [], revision: 0};
  const finished = treeFigure(SMALL, nodes, view, 800).data.find((trace) => trace.name === "finished");
  const hover = finished.hovertext[finished.customdata.findIndex(([, id]) => id === 13)]; // length 3, the end token's step
  assert.match(hover, /total −1\.900<br>finished<br>score with the length penalty −1\.599$/); // −1.9 / (8 / 6)^0.6
});

test("the path to a node, and the nodes the page's decoding passes through until it leaves the tree", () => {
  const nodes = treeNodes(SMALL);
  assert.deepEqual(pathTo(nodes, 11), [0, 2, 6, 11]);
  assert.deepEqual(pathTo(nodes, 0), [0]);
  assert.deepEqual(decodingPath(nodes, [10, 20, 2]), [0, 2, 6, 11]);
  assert.deepEqual(decodingPath(nodes, [11, 99, 2]), [0, 1]); // another token at step 2
  assert.deepEqual(decodingPath(nodes, []), [0]);
});

test("a tree is drawn for its own run only, and its summary counts it and names the best hypothesis", () => {
  assert.equal(ofRun(SMALL, {serial: 3, version: 7}), true);
  assert.equal(ofRun(SMALL, {serial: 4, version: 0}), false);
  assert.equal(ofRun(SMALL, {serial: 33, version: 1}), false);
  assert.equal(treeSummary(SMALL, treeNodes(SMALL)), "Beam size 2: 15 nodes, 7 pruned. Best hypothesis (orange): "
    + "“a e”, total log p −0.350. Finished hypotheses are ranked by total / ((5 + length) / 6)^0.6 (GNMT's length "
    + "penalty).");
});

test("the figure opens on the steps that fit, at least 4 at a phone's width, and rings the best, the page's and the clicked", () => {
  const long = searched(7, 12, 2), nodes = treeNodes(long);
  const view = {fold: true, unfolded: new Set(), picked: null, current: [], revision: 0};
  const last = Math.max(...nodes.map((n) => n.step));
  assert.ok(last >= 8);
  assert.deepEqual(treeFigure(long, nodes, view, 800).layout.xaxis.range, [-0.4, 7.5]); // (800 - 28) / 92: 8 steps
  assert.deepEqual(treeFigure(long, nodes, view, 300).layout.xaxis.range, [-0.4, 3.5]);
  assert.deepEqual(treeFigure(SMALL, treeNodes(SMALL), view, 800).layout.xaxis.range, [-0.4, 3.5]); // all it has
  const small = treeNodes(SMALL);
  const figure = treeFigure(SMALL, small, {...view, picked: 9, current: [2, 6]}, 800);
  const best = figure.data.filter((trace) => trace.mode === "markers");
  assert.deepEqual(best.map((r) => r.x), [[0, 1, 2, 3]]); // the best path
  // the decoding's rings and the clicked node's, shapes a Step or a click moves with no redraw of the tree
  const at = (shape) => [shape.xanchor, shape.yanchor, shape.line.color];
  assert.deepEqual(figure.layout.shapes.map(at), [[1, 0, "#08306b"], [2, 0, "#08306b"], [2, 3, "#000"]]);
  const {rows} = treeLayout(small, true);
  assert.deepEqual(rings(small, rows, [], 12), []); // folded away
  assert.deepEqual(rings(small, rows, [], null), []);
});
