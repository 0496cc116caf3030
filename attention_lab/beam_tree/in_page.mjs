// The Beam tree tab made in the page: the tree, the page's own beam search of the run's source
// (decoding/beams.mjs, the library's search), every continuation it weighed recorded (decoding/search_tree.mjs), as
// the message beam_tree/messages.py page_tree sends (tests/test_beam_tree_in_page.py holds the two equal); a clicked
// node's hypothesis, its path forced on a fork of the page's session, as beam_tree/feature.py hypothesis_message
// makes it; and "Decode on from here", by the page's step loop (decoding/loop.mjs decodeOn), Back undoing it
// (tests/test_road.py holds both to the server's). While the page draws the tree, a click asks the server nothing.

import {pyRound} from "../assets/format.mjs";
import {madeHere, textsOf} from "../assets/here.mjs";
import {page, sameKey} from "../assets/store.mjs";
import {InputError} from "../page_copy/model.mjs";
import {forced} from "../decoding/again.mjs";
import {ALPHA, beamSearch} from "../decoding/beams.mjs";
import {decoding} from "../decoding/messages.mjs";
import {SearchTree} from "../decoding/search_tree.mjs";

export const HYPOTHESIS = "beam_tree:hypothesis"; // what hypothesis.mjs takes the page's messages by (here.mjs)

/** The tree of the decoding `run` ({ids, ablated, limit, key}) of the page copy `model`: its source searched with
 * the tree's beam size (`asked.beam`), under the heads it ablates and its length limit. */
export async function made(model, run, asked = {}) {
  const beam = asked.beam ?? 4, search = await searched(model, run, beam), held = messages.get(search);
  if (held?.serial === run.key.serial) return held; // the same tree for a Step: its view moves the ring alone
  const {tree, found} = search, nodes = tree.nodes;
  const message = {
    serial: run.key.serial,
    beam,
    alpha: ALPHA,
    best: tree.best,
    text: model.tokenizer.decode(found.tokens, {skip_special_tokens: true}),
    parent: nodes.map((n) => (n.parent === null ? -1 : n.parent)),
    step: nodes.map((n) => n.step),
    token: nodes.map((n) => n.token),
    label: nodes.map((n) => model.label(n.token)),
    logp: nodes.map((n) => pyRound(n.logp, 5)),
    total: nodes.map((n) => pyRound(n.total, 5)),
    state: nodes.map((n) => n.state[0]).join(""),
    op: "tree",
  };
  messages.set(search, message);
  return message;
}

const messages = new WeakMap(); // a search -> its last message

const last = new WeakMap(); // a page copy's LiveModel -> its last search: {id, promise}

/** What tells one search from another: the source, the heads ablated, the length limit and the beam size. */
const searchId = (run, beam) => JSON.stringify([run.ids, run.ablated ?? [], run.limit, beam]);

/** The search of the run's source with beam size `beam`, the last one again while it is the same (a Step searches
 * nothing anew): {tree, found}. */
export function searched(model, run, beam) {
  const id = searchId(run, beam), held = last.get(model);
  if (held?.id === id) return held.promise;
  const promise = (async () => {
    const session = await model.start(run.ids, 1, run.limit, run.ablated ?? []);
    const tree = new SearchTree(model.config.bos_id, ALPHA);
    return {tree, found: await beamSearch(session, beam, ALPHA, tree)};
  })();
  last.set(model, {id, promise});
  promise.catch(() => last.get(model)?.promise === promise && last.delete(model));
  return promise;
}

/** What the tree of the decoding `session` (a LiveSession, with the heads `ablated`) searches: its source, under its
 * ablations and length limit. */
export function searchRun(session, ablated) {
  return {ids: session.srcIds, ablated, limit: session.maxNew};
}

/** What the tree of the decoding a Loop holds searches. */
const loopRun = (loop) => searchRun(loop.session, loop.options.ablated ?? []);

/** The hypothesis of node `node` of the tree searched with beam size `beam` for the page's decoding `session` (a
 * LiveSession, left as it is; with the heads `ablated`): its path forced, drawn as a decoding, at the node's step
 * (beam_tree/messages.py Hypothesis). */
export async function hypothesis(model, session, ablated, beam, node) {
  const {tree} = await searched(model, searchRun(session, ablated), beam);
  const chosen = tree.nodes[node], path = pathOf(tree, node);
  const data = decoding(await forced(session, path));
  const text = model.tokenizer.decode(path, {skip_special_tokens: true});
  return {node, step: chosen.step, text, total: chosen.total, state: chosen.state, data, op: "hypothesis"};
}

/** The tokens from the root's child down to node `id` (transformer/beam_tree.py SearchTree.path). */
export function pathOf(tree, id) {
  const tokens = [];
  for (let n = tree.nodes[id]; n.parent !== null; n = tree.nodes[n.parent]) tokens.unshift(n.token);
  return tokens;
}

let picked = null; // the node clicked in the page: {node, loop, beam, search (its tree's id)}

/** A click on node `node` of the tree of beam size `beam`, taken by the page when it draws the tree for the decoding
 * its loop holds: the hypothesis drawn below (hypothesis.mjs), no request. Whether it took it; if not, the tree tells
 * the server (`tell`), which draws it. */
export function pickHere(node, beam, tell) {
  const road = globalThis.attentionLabRoad, loop = road && !road.passing ? road.taker("pick") : null;
  if (!loop?.session || !sameKey(page.key, loop.key()) || !road.drawnHere(loop.model.config.name).includes("beam_tree")) {
    picked = null;
    return false;
  }
  const session = loop.session, ablated = loop.options.ablated ?? [];
  picked = {node, loop, beam, search: searchId(loopRun(loop), beam)};
  const mine = picked;
  loop.queue.then(() => hypothesis(loop.model, session, ablated, beam, node)).then((message) => {
    if (picked === mine) madeHere(HYPOTHESIS, message);
  }, (err) => {
    console.error(err);
    if (picked === mine) tell();
  });
  return true;
}

/** The page draws no hypothesis now (a new tree was drawn, or none). */
export function unpicked() {
  picked = null;
  madeHere(HYPOTHESIS, {node: null, op: "hypothesis"});
}

/** The node clicked in the page, while it is a node of the tree of the decoding the loop holds now. */
function pickedNow() {
  const loop = picked?.loop, s = loop?.session;
  if (!s || !sameKey(page.key, loop.key())) return null;
  return picked.search === searchId(loopRun(loop), picked.beam) ? picked : null;
}

const STRATEGY = {"beam-tree-greedy": "greedy", "beam-tree-beam-on": "beam"};

if (!globalThis.attentionLabBeamTree && globalThis.document) {
  globalThis.attentionLabBeamTree = true;
  // "Decode on from here" on a node clicked in the page: decoded on by the page's loop, with no request, from the
  // node as it is when the loop comes to it (a click queued behind a new Run finds no node of its tree clicked)
  document.addEventListener("click", (event) => {
    const button = event.target.closest?.("#beam-tree-greedy, #beam-tree-beam-on"), road = globalThis.attentionLabRoad;
    if (!button || button.disabled || !road || road.passing) return;
    const now = pickedNow(), said = textsOf("beam_tree");
    if (!now || road.taker("decode-on") !== now.loop) return road.unanswered?.(said.node_first); // the server's, else
    event.preventDefault();
    event.stopImmediatePropagation();
    const {node, loop, beam} = now;
    const branch = async () => {
      if (pickedNow() !== now) throw new InputError(said.node_first);
      const {tree} = await searched(loop.model, loopRun(loop), beam);
      return {path: pathOf(tree, node), shown: Math.max(1, tree.nodes[node].step), beamSize: beam};
    };
    // a mistake said in the loop's line (the server would tell a node of another tree); a failure of the copy hands
    // the page to the server, the click lost (its pick is the page's)
    road.answer(loop, "decodeOn", null, branch, STRATEGY[button.id], said.change);
  }, true);
}
