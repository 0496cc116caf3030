// Beam search in the page, as the library's (transformer/beams.py): the k best hypotheses extended a step at a time
// from their 2k best continuations, in float32 as torch sums them; a hypothesis that ends leaves the beam, scored
// with the GNMT length penalty; the search stops at the length limit, or when no live beam can still beat the k-th
// best finished one. Its history (the live beams after each step, best first) is what the Beams tab lists.

export const ALPHA = 1.0; // the library's default length penalty

/** GNMT length penalty (Wu et al. 2016), transformer.beams.length_normalise. */
export function lengthNormalise(logProb, length, alpha = ALPHA) {
  return logProb / ((5 + length) / 6) ** alpha;
}

/** Log-probabilities from logits, in float32 (what the model never writes is -inf). */
export function logSoftmax(logits) {
  let max = -Infinity;
  for (const x of logits) if (x > max) max = x;
  let sum = 0;
  for (const x of logits) sum += Math.exp(x - max);
  const shift = max + Math.log(sum), out = new Float32Array(logits.length);
  for (let i = 0; i < logits.length; i++) out[i] = logits[i] - shift;
  return out;
}

/** The `n` best (score, flat index) of every live beam's continuations, best first (the lower index first among
 * equals); each score is the beam's summed log-probability plus the token's, added in float32. */
function best(beams, logProbs, n) {
  const top = [];
  const V = logProbs[0].length;
  beams.forEach((beam, b) => {
    const row = logProbs[b];
    for (let v = 0; v < V; v++) {
      const score = Math.fround(beam.score + row[v]);
      if (score === -Infinity || (top.length === n && score <= top[n - 1][0])) continue;
      let at = top.length;
      while (at > 0 && score > top[at - 1][0]) at--;
      top.splice(at, 0, [score, b * V + v]);
      if (top.length > n) top.pop();
    }
  });
  return top;
}

/** Beam search of beam size `k` over `session`'s source (a LiveSession, its steps untouched): {tokens (the best
 * hypothesis, without the end token), score (its normalised log-probability), history, candidates}; every
 * continuation it weighed recorded in `tree` (a SearchTree, search_tree.mjs) when one is given. The tokens of
 * `prefix` are forced first (each alone may be written at its step, at its own log-probability), then the search
 * goes on from it. */
export async function beamSearch(session, k, alpha = ALPHA, tree = null, prefix = []) {
  const c = session.model.config, steps = session.maxNew, eos = c.eos_id;
  let beams = [{tokens: [], score: 0, cache: session.caches[0]}];
  const finished = [], history = [];
  let atLimit = false;
  for (let step = 0; step < steps && beams.length; step++) {
    const outs = [];
    for (const beam of beams) outs.push(await session.decode(beam.tokens.length ? beam.tokens.at(-1) : c.bos_id, beam.cache));
    const logProbs = outs.map((out) => only(logSoftmax(session.ruled(out.logits.data, step)), prefix[step]));
    const V = logProbs[0].length;
    const live = [], ended = new Set();
    best(beams, logProbs, 2 * k).forEach(([score, flat], rank) => {
      const b = Math.floor(flat / V), token = flat % V, tokens = [...beams[b].tokens, token];
      if (token === eos) {
        if (rank < k) finished.push([lengthNormalise(score, tokens.length, alpha), tokens.slice(0, -1)]);
        if (rank < k) ended.add(tokens.join(","));
      } else if (live.length < k) {
        live.push({tokens, score, cache: {past_k: outs[b].next_k, past_v: outs[b].next_v}});
      }
    });
    tree?.grow(step + 1, beams.map((beam) => beam.tokens), logProbs, k, new Set(live.map((b) => b.tokens.join(","))), ended);
    history.push(live.map((beam) => [beam.tokens, beam.score]));
    beams = live;
    atLimit = step + 1 === steps;
    if (atLimit || cannotImprove(finished, live, step + 1, steps, k, alpha)) break;
  }
  const candidates = finished.slice();
  if (atLimit || candidates.length < k) {
    for (const beam of beams) candidates.push([lengthNormalise(beam.score, beam.tokens.length, alpha), beam.tokens]);
  }
  candidates.sort((a, b) => b[0] - a[0]);
  if (tree) tree.best = tree.nodeOf([...candidates[0][1], eos]) ?? tree.nodeOf(candidates[0][1]);
  return {tokens: candidates[0][1], score: candidates[0][0], history, candidates: candidates.map(([s, t]) => [t, s])};
}

/** Log-probabilities with every token but `token` at -inf (a forced step, transformer/beams.py _only); all of
 * them where no token is forced. */
function only(logProbs, token) {
  if (token === undefined) return logProbs;
  const forced = new Float32Array(logProbs.length).fill(-Infinity);
  forced[token] = logProbs[token];
  return forced;
}

/** `session`'s steps forced on through `tokens` (those it has not written yet) and the end token, until it finishes
 * (run/search.py replayed): a search's hypothesis decoded by the session, so that the views draw its own attention. */
export async function replayed(session, tokens) {
  for (const token of [...tokens.slice(session.steps.length), session.model.config.eos_id]) {
    if (session.finished) break;
    await session.step(token);
  }
  return session;
}

/** Whether no live beam can still beat the k-th best finished hypothesis (transformer.beams._Row._cannot_improve). */
function cannotImprove(finished, live, length, maxLength, k, alpha) {
  if (finished.length < k) return false;
  const worstKept = finished.map(([score]) => score).sort((a, b) => b - a)[k - 1];
  const bestLive = live.length ? Math.max(...live.map((beam) => beam.score)) : -Infinity;
  if (bestLive === -Infinity) return true;
  const bound = Math.max(lengthNormalise(bestLive, length + 1, alpha), lengthNormalise(bestLive, maxLength + 1, alpha));
  return bound < worstKept;
}
