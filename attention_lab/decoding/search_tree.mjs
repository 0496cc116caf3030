// The whole beam search as a tree, recorded as the page's beam search (beams.mjs) goes, as the library records it
// (transformer/beam_tree.py SearchTree): at each step, each live hypothesis's `k` most probable next tokens become
// nodes, marked kept (live after the step), finished (the end token among the step's k best extensions) or pruned;
// a node's total is its parent's plus its own log p. beam_tree/in_page.mjs draws it as the server's message.

export const KEPT = "kept", PRUNED = "pruned", FINISHED = "finished";

export class SearchTree {
  constructor(bosId, lengthPenalty) {
    Object.assign(this, {bosId, lengthPenalty, best: null});
    this.nodes = [{id: 0, parent: null, step: 0, token: bosId, logp: 0, total: 0, state: KEPT}];
    this.paths = new Map([["", 0]]); // tokens after bos, joined -> the node id of a kept or finished path
  }

  /** Step `step` (1-based): for each live hypothesis `beams[i]` (its tokens after bos), its `k` most probable
   * continuations by `logProbs[i]`, then any kept or finished extension of it outside them; `kept` and `finished`
   * the paths (joined tokens) now live, and those that ended at this step (the end token included). */
  grow(step, beams, logProbs, k, kept, finished) {
    beams.forEach((beam, i) => {
      const parent = this.nodes[this.paths.get(beam.join(","))], row = logProbs[i];
      const tokens = topK(row, k);
      const mine = [...kept, ...finished].map((p) => p.split(",").map(Number))
        .filter((p) => p.length === beam.length + 1 && p.slice(0, -1).join(",") === beam.join(","));
      for (const token of mine.map((p) => p.at(-1)).sort((a, b) => a - b)) if (!tokens.includes(token)) tokens.push(token);
      for (const token of tokens) {
        const logp = row[token];
        if (logp === -Infinity) continue;
        const path = [...beam, token].join(",");
        const state = kept.has(path) ? KEPT : finished.has(path) ? FINISHED : PRUNED;
        const node = {id: this.nodes.length, parent: parent.id, step, token, logp, total: parent.total + logp, state};
        this.nodes.push(node);
        if (state !== PRUNED) this.paths.set(path, node.id);
      }
    });
  }

  /** The kept or finished node a hypothesis (its tokens after bos, the end token included if finished) ends at. */
  nodeOf(path) {
    return this.paths.get(path.join(",")) ?? null;
  }
}

/** The indices of the `k` largest values of `row`, largest first (the lower index first among equals, as torch's
 * topk on the search's rows). */
function topK(row, k) {
  const top = [];
  for (let v = 0; v < row.length; v++) {
    if (top.length === k && row[v] <= row[top[k - 1]]) continue;
    let at = top.length;
    while (at > 0 && row[v] > row[top[at - 1]]) at--;
    top.splice(at, 0, v);
    if (top.length > k) top.pop();
  }
  return top;
}
