// The Beam tree tab's tree made in the page: the page's own beam search of the run's source (decoding/beams.mjs,
// the library's search), every continuation it weighed recorded (decoding/search_tree.mjs), as the message
// beam_tree/messages.py page_tree sends. tests/test_beam_tree_in_page.py holds the two equal. A node's hypothesis and
// decoding on from it are the server's (a click asks it).

import {pyRound} from "../assets/format.mjs";
import {ALPHA, beamSearch} from "../decoding/beams.mjs";
import {SearchTree} from "../decoding/search_tree.mjs";

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

/** The search of the run's source with beam size `beam`, the last one again while it is the same (a Step searches
 * nothing anew). */
function searched(model, run, beam) {
  const id = JSON.stringify([run.ids, run.ablated ?? [], run.limit, beam]), held = last.get(model);
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
