// A decoding made again in the page: a path forced on a fork of the page's own session (a Beam tree node's
// hypothesis, decoding on from it: run/search.py forced), and the decoding made again for a tab that reads its
// weights (the Heads tab's summary, Two models' side A where the run comes without its session).

import {InputError} from "../page_copy/model.mjs";

/** A LiveSession like `session`, sharing its steps so far; what either does next leaves the other as it is. */
export function fork(session) {
  return Object.assign(Object.create(Object.getPrototypeOf(session)), session,
    {steps: session.steps.slice(), caches: session.caches.slice()});
}

/** A fork of `session` (a LiveSession, left as it is) whose steps wrote `path`: the steps it shares with the path
 * kept (a step's attention depends only on the tokens before it), the rest forced; InputError, in the server's
 * words, where the model may not write the path. */
export async function forced(session, path) {
  const s = fork(session);
  let same = 0;
  while (same < Math.min(path.length, s.steps.length) && s.steps[same].token === path[same]) same++;
  while (s.steps.length > same) s.back();
  for (let i = same; i < path.length; i++) {
    if (s.finished) throw new InputError("The prefix goes on after the end token: cut it there.");
    if (!s.canWrite(path[i], i)) throw new InputError(`The model may not write '${s.model.piece(path[i])}' at step ${i + 1}.`);
    await s.step(path[i]);
  }
  return s;
}

/** A LiveSession of `model` holding the steps of `run.tokens` with no head ablated: the page's own (or a fork of
 * it, stepped back and on to those tokens), else the decoding made again, each token forced. */
export async function decodedAgain(model, run, limit) {
  const {ids, tokens} = run, held = run.session;
  const same = held && !run.ablated?.length && held.srcIds.length === ids.length && held.srcIds.every((id, i) => id === ids[i]);
  return forced(same ? held : await model.start(ids, 1, limit, []), tokens);
}
