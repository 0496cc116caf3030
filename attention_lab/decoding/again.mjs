// A decoding made again in the page for a tab that reads its weights (the Heads tab's summary, Two models' side A
// where the run comes without its session): the page's own session where it holds one, else its tokens forced.

export /** A LiveSession of `model` holding the steps of `run.tokens` with no head ablated: the page's own (or a fork of it,
 * stepped back and on to those tokens), else the decoding made again, each token forced. */
async function decodedAgain(model, run, limit) {
  const {ids, tokens} = run, held = run.session;
  let s;
  if (held && !run.ablated?.length && held.srcIds.length === ids.length && held.srcIds.every((id, i) => id === ids[i])) {
    s = Object.assign(Object.create(Object.getPrototypeOf(held)), held, {steps: held.steps.slice(), caches: held.caches.slice()});
    while (s.steps.some((step, i) => step.token !== tokens[i])) s.back();
  } else s = await model.start(ids, 1, limit, []);
  while (s.steps.length < tokens.length) await s.step(tokens[s.steps.length]);
  return s;
}
