// The Why tab's message made in the page, by any of its four methods. Occlusion and value zeroing: the attribution
// graph (page_copy/attribution.py, the library's passes traced) gives, for every step of the decoding at once, how far
// the written token's log p falls when each source token's or decoder input's embedding is zeroed (occlusion) or its
// value vector (value zeroing), and each decoder layer's lens. Input × gradient and integrated gradients: the
// gradients graph (page_copy/gradients.py, the library's pass and its backward traced) gives each token's values per
// embedding dimension for every step, over the points of integrated gradients' path, in parts the page adds up. This
// takes each step's values, aggregates them, adds the source's share, integrated gradients' gap, the settled layer and
// the server's rounding (why/feature.py explain, why/messages.py why_step and lens_data), with the server's texts
// (Feature.texts, textsOf), so that why.mjs draws it as it draws the server's. tests/test_why_in_page.py holds the two
// equal. A copy without the gradients graph leaves the gradient methods to the server: `made` gives null.

import {pyFixed, pyRound} from "../assets/format.mjs";
import {textsOf} from "../assets/here.mjs";
import {LiveSession, stepRules} from "../page_copy/model.mjs";

const FALLS = {occlusion: ["occlusion_source", "occlusion_prefix"], value_zeroing: ["zeroing_source", "zeroing_prefix"]};
const KEPT = 4; // the graph's outputs kept per copy: another aggregate of the same decoding runs nothing
// the most rows (a point of the path and a step each) one run of the gradients graph takes: its backward pass keeps
// every layer's activations of every row, which a page's memory must hold
const ROWS = 128;
const read = new WeakMap(); // a copy's LiveModel -> Map(what the graph read -> its outputs, a promise)
const lensed = new WeakMap(); // a copy's LiveModel -> Map(what the DecoderLens read -> its message, a promise)

/** Whether the page makes the Why message of `method` for the copy `model`: a method the page makes, and, for a
 * gradient method, a copy that has the gradients graph (null `model`: a copy not yet loaded, which the page asks). */
export function makesHere(method, model = null) {
  const t = textsOf("why");
  if (!t.titles?.[method]) return false;
  return !t.gradients?.includes(method) || !model?.analyses || "gradients" in model.analyses;
}

/** The Why message of the decoding `run` ({ids, tokens, ablated, key}) of the page copy `model` (its explanations'
 * graphs loaded), as the server's explain makes it for what the tab asks (`asked`: {method, aggregate, limit: the
 * most steps the decoding may take, the model's by default}); null for a method the server makes (makesHere). */
export async function made(model, run, asked = {}) {
  const t = textsOf("why"), c = model.config, {ids, tokens} = run;
  const method = asked.method ?? t.method, aggregate = asked.aggregate ?? t.aggregate;
  const title = t.titles?.[method]?.[aggregate];
  if (!title || !makesHere(method, model) || !model.analyses?.[FALLS[method] ? "attribution" : "gradients"]) return null;
  const notes = {method: t.notes[method][aggregate], words: t.words, agreement: t.agreement};
  const message = {key: run.key, method, aggregate, title, notes, tokens: [...tokens], steps: [], lens: null, op: "why"};
  if (!tokens.length) return message;
  const limit = Math.min(asked.limit || Infinity, c.max_new_tokens);
  const out = await outputs(model, ids, tokens, run.ablated || [], limit, FALLS[method] ? method : "lens");
  const S = ids.length, T = tokens.length;
  if (FALLS[method]) {
    const [source, prefix] = FALLS[method].map((name) => out[name].data), size = aggregate === "l2" ? Math.abs : (v) => v;
    for (let t = 0; t < T; t++) {
      const src = Array.from({length: S}, (_, j) => size(source[j * T + t]));
      const pre = Array.from({length: t + 1}, (_, j) => size(prefix[j * T + t]));
      message.steps.push({source: src.map(significant), prefix: pre.map(significant), source_share: share(src, pre),
        log_prob: pyRound(out.log_prob.data[t], 5)});
    }
  } else {
    const g = await gradients(model, ids, tokens, run.ablated || [], limit, method);
    for (let t = 0; t < T; t++) message.steps.push(gradientStep(g, t, aggregate, method === "integrated_gradients"));
  }
  message.lens = lens(model, tokens, out);
  return message;
}

/** Step t's record from the gradient methods' sums (`gradients`), as why_step makes it: each token's values reduced
 * over the dimensions as `aggregate` asks (scorer.py AGGREGATES: summed, or their L2 norm), the source's share, log p;
 * with `gap`, integrated gradients' convergence delta (Captum's: the sum of every value less the change in log p from
 * the path's start to its end) and the total it is the gap of. */
function gradientStep(g, t, aggregate, gap) {
  const {source, prefix, S, T, D} = g, row = (values, n, i) => values.subarray((t * n + i) * D, (t * n + i + 1) * D);
  const reduce = aggregate === "l2" ? (v) => Math.sqrt(v.reduce((a, x) => a + x * x, 0)) : (v) => v.reduce((a, x) => a + x, 0);
  const src = Array.from({length: S}, (_, j) => reduce(row(source, S, j)));
  const pre = Array.from({length: t + 1}, (_, j) => reduce(row(prefix, T, j)));
  const step = {source: src.map(significant), prefix: pre.map(significant), source_share: share(src, pre),
    log_prob: pyRound(g.end[t], 5)};
  if (gap) {
    const summed = (values, n) => Array.from({length: n}, (_, j) => row(values, n, j).reduce((a, x) => a + x, 0))
      .reduce((a, v) => a + v, 0);
    const delta = summed(source, S) + summed(prefix, T) - (g.end[t] - g.start[t]);
    const total = [...src, ...pre].reduce((a, v) => a + v, 0);
    if (Number.isFinite(delta)) Object.assign(step, {gap: pyRound(delta, 5), total: pyRound(total, 5)});
  }
  return step;
}

/** The gradient methods' values for the decoding, from the copy's gradients graph: {source (T, S, D) and prefix
 * (T, T, D), each token's values per dimension at each step, summed over the path's points; end and start (T,): log p
 * at the path's end (the embeddings as they are) and its start (zero embeddings; none for input × gradient)}.
 * Input × gradient: the one point 1, weighing 1. Integrated gradients: the server's points (textsOf("why").integration)
 * and the points 0 and 1 weighing nothing (the delta reads log p there), run in parts of at most ROWS rows, added up.
 * Run once for what they read. */
function gradients(model, ids, tokens, ablated, limit, method) {
  return kept(read, model, JSON.stringify([ids, tokens, ablated, limit, method]), async () => {
    const keep = model.keep(ablated), S = ids.length, T = tokens.length;
    const path = method === "integrated_gradients", {alphas, weights} = textsOf("why").integration;
    const [points, weighing] = path ? [[...alphas, 0, 1], [...weights, 0, 0]] : [[1], [1]];
    const fixed = {source: model.int64(ids, [1, S]), tokens: model.int64(tokens, [T]), keep_encoder: keep.encoder,
      keep_self: keep.decoder_self, keep_cross: keep.cross, rules: stepRules(model, T, limit)};
    const per = Math.max(1, Math.floor(ROWS / T));
    let source = null, prefix = null, D = 0;
    const scores = [];
    for (let at = 0; at < points.length; at += per) {
      const part = points.slice(at, at + per), n = part.length;
      const out = await model.explain("gradients", {...fixed,
        alphas: new model.ort.Tensor("float32", Float32Array.from(part), [n]),
        weights: new model.ort.Tensor("float32", Float32Array.from(weighing.slice(at, at + per)), [n])});
      D = out.source_parts.dims[2];
      source = added(source, out.source_parts.data);
      prefix = added(prefix, out.prefix_parts.data);
      for (let k = 0; k < n; k++) scores.push(out.scores.data.subarray(k * T, (k + 1) * T));
    }
    return {source, prefix, S, T, D, start: path ? scores.at(-2) : null, end: scores.at(-1)};
  });
}

/** `more` added to `sum` (a Float64Array, made from `more` at first). */
function added(sum, more) {
  if (sum === null) return Float64Array.from(more);
  for (let i = 0; i < more.length; i++) sum[i] += more[i];
  return sum;
}

/** The attribution graph's outputs for the decoding (LiveModel.explain) by `method`, which changes every position of
 * the source and the prefix (the other method's passes change none: a row each; "lens": neither's), run once for
 * what they read. */
function outputs(model, ids, tokens, ablated, limit, method) {
  return kept(read, model, JSON.stringify([ids, tokens, ablated, limit, method]), () => {
    const keep = model.keep(ablated), S = ids.length, T = tokens.length;
    const all = (n) => model.int64([...Array(n).keys()], [n]), none = () => model.int64([], [0]);
    const [occluded, zeroed] = {occlusion: [all, none], value_zeroing: [none, all]}[method] ?? [none, none];
    return model.explain("attribution", {source: model.int64(ids, [1, S]),
      tokens: model.int64(tokens, [T]), keep_encoder: keep.encoder, keep_self: keep.decoder_self, keep_cross: keep.cross,
      rules: stepRules(model, T, limit),
      occluded_source: occluded(S), occluded_prefix: occluded(T), zeroed_source: zeroed(S), zeroed_prefix: zeroed(T)});
  });
}

/** What `make()` promises, kept in `store` for the copy `model` by `id`: the last KEPT of them (a failure is not). */
function kept(store, model, id, make) {
  if (!store.has(model)) store.set(model, new Map());
  const made = store.get(model);
  if (!made.has(id)) {
    made.set(id, make().catch((err) => {
      made.delete(id);
      throw err;
    }));
    while (made.size > KEPT) made.delete(made.keys().next().value);
  }
  return made.get(id);
}


/** Four significant figures, as messages.py significant: Python's float(f"{v:.4g}"). */
export function significant(v) {
  if (v === 0 || !Number.isFinite(v)) return v;
  let e = Math.floor(Math.log10(Math.abs(v)));
  if (Math.abs(v) < 10 ** e) e -= 1; // log10 rounded up past a power of ten
  else if (Math.abs(v) >= 10 ** (e + 1)) e += 1;
  return 3 - e >= 0 && 3 - e <= 100 ? Number(pyFixed(v, 3 - e)) : Number(v.toPrecision(4));
}

/** The source's share of a step's absolute values, 4 decimals; null when all are 0 (scorer.py source_share). */
function share(source, prefix) {
  const sum = (values) => values.reduce((total, v) => total + Math.abs(v), 0);
  const src = sum(source), all = src + sum(prefix);
  return all > 0 ? pyRound(src / all, 4) : null;
}

/** The lens for the page (messages.py lens_data): per step and layer the top tokens, labelled, but those of
 * probability 0, and the written token's probability; per step the layer (1-based) from which on the written token
 * is the top one, or null. */
function lens(model, tokens, out) {
  const [L, T, k] = out.lens_ids.dims, ids = out.lens_ids.data, probs = out.lens_probs.data;
  const written = out.lens_written.data, at = (l, t) => (l * T + t) * k;
  const top = [], chances = [], settled = [];
  for (let t = 0; t < T; t++) {
    top.push(Array.from({length: L}, (_, l) => Array.from({length: k}, (_, r) => at(l, t) + r)
      .filter((i) => probs[i] > 0) // not what the model may not write there
      .map((i) => [model.label(Number(ids[i])), pyRound(probs[i], 4)])));
    chances.push(Array.from({length: L}, (_, l) => pyRound(written[l * T + t], 4)));
    let first = null; // transformer/lens.py _settled
    for (let l = L - 1; l >= 0 && Number(ids[at(l, t)]) === tokens[t]; l--) first = l;
    settled.push(first === null ? null : first + 1);
  }
  return {layers: L, top, written: chances, settled};
}

/** The DecoderLens message of the source of `run` ({ids, ablated}) of the page copy `model`, as the server's
 * why/messages.py decoderlens_data makes it: per encoder reading (0: the embeddings), the tokens (labelled) and text
 * the decoder writes greedily from it within `asked.limit` tokens (the model's own at most), and whether it wrote the end
 * token. The copy's DecoderLens graph (page_copy/decoderlens.py) gives each reading's cross-attention keys and values;
 * the page's own decoding (LiveSession, with the model's rules and the heads ablated) writes from each. Made once per
 * source, limit and heads ablated (a Step does not change it). */
export function decoderLens(model, run, asked = {}) {
  const ablated = run.ablated || [], most = Math.min(asked.limit || Infinity, model.config.max_new_tokens);
  return kept(lensed, model, JSON.stringify([run.ids, ablated, most]),
    () => writtenFromEachReading(model, run.ids, ablated, most));
}

/** Each reading's greedy decoding, all at once: the DecoderLens graph gives every reading's keys and values, then
 * each step of the decoder runs over all the readings in one run of the step graph (decoderlens_step), a row per
 * reading, with the model's rules (LiveSession.ruled) and its choice (the most probable, the lower id among equals);
 * a row that has finished is carried along unread. */
async function writtenFromEachReading(model, ids, ablated, limit) {
  const keep = model.keep(ablated), c = model.config, V = c.tgt_vocab_size, tensor = model.ort.Tensor;
  const out = await model.explain("decoderlens", {source: model.int64(ids, [1, ids.length]), keep_encoder: keep.encoder});
  const [R, Ld, H, , K] = out.cross_k.dims;
  const cross = {cross_k: new tensor("float32", out.cross_k.data, out.cross_k.dims),
    cross_v: new tensor("float32", out.cross_v.data, out.cross_v.dims)};
  const rules = {model, maxNew: Math.min(limit || Infinity, c.max_new_tokens)}; // what LiveSession.ruled reads
  const written = Array.from({length: R}, () => []);
  const done = (tokens) => tokens.length > 0 && (tokens.at(-1) === c.eos_id || tokens.length >= rules.maxNew);
  let past = {past_k: new tensor("float32", new Float32Array(0), [R, Ld, H, 0, K])};
  past.past_v = past.past_k;
  for (let t = 0; !written.every(done); t++) {
    const last = written.map((tokens) => (tokens.length ? tokens.at(-1) : c.bos_id));
    const step = await model.explain("decoderlens_step", {tokens: model.int64(last, [R, 1]), ...past, ...cross,
      keep_self: keep.decoder_self, keep_cross: keep.cross});
    written.forEach((tokens, r) => {
      if (!done(tokens)) tokens.push(chosen(LiveSession.prototype.ruled.call(rules, step.logits.data.subarray(r * V, (r + 1) * V), t)));
    });
    past = {past_k: new tensor("float32", step.next_k.data, step.next_k.dims),
      past_v: new tensor("float32", step.next_v.data, step.next_v.dims)};
  }
  const layers = written.map((tokens, l) => ({layer: l, tokens: tokens.map((t) => model.label(t)),
    text: model.tokenizer.decode(tokens, {skip_special_tokens: true}), ended: tokens.at(-1) === c.eos_id}));
  return {layers, limit, op: "decoderlens"};
}

/** The id of the largest logit, the lower id among equals: the greedy choice (LiveSession.step's, whose softmax
 * keeps the order). */
function chosen(logits) {
  let best = 0;
  for (let i = 1; i < logits.length; i++) if (logits[i] > logits[best]) best = i;
  return best;
}
