// The Patch tab's message made in the page: the patching graph (attention_lab/page_copy/patching.py, the library's
// transformer.patching traced) runs the clean and the corrupted source and restores every component from the clean
// run on its own; this cuts its outputs into the message the server would send (attention_lab/patch/feature.py
// patched, messages.py steps_record: the same labels, words, hints, rounding and nulls), with the server's texts
// (Feature.texts, textsOf), so that patch.mjs draws the page's message as it draws the server's. The corrupted
// source's output is decoded greedily here, from the corrupted encoder's output the graph gives (its noise included).
// tests/test_patch_in_page.py holds the two equal.

import {pyFormat, pyRound} from "../assets/format.mjs";
import {textsOf} from "../assets/here.mjs";
import {describeHeads} from "../assets/naming.mjs";
import {BLANK, InputError, LiveSession} from "../page_copy/model.mjs";
import {wordGroups, wordLabel} from "../page_copy/pieces.mjs";

const SITES = {encoder: "encoder_heads", decoder_self: "self_heads", cross: "cross_heads"}; // kind -> graph output
const r = (v) => (Number.isNaN(v) ? null : pyRound(v, 4)); // messages.py _r

/** The Patch tab's message for the decoding `run` ({ids, tokens, ablated, key}) of the page copy `model` (LiveModel,
 * its explanations' graphs loaded), for what the tab asks (`asked`: {corrupted: the corrupted source as typed or
 * swapped, null for the clean one; noise: the words (0-based) with noise; limit: the most steps the decoding may
 * take, the model's by default}). */
export async function made(model, run, asked = {}) {
  const t = textsOf("patch"), c = model.config, {ids, tokens} = run;
  const label = (id) => model.label(id), groups = sourceWords(model, ids);
  const noise = [...new Set(asked.noise || [])].sort((a, b) => a - b);
  const message = {tokens: [...tokens], source: ids.map(label), op: "patch", noise, steps: [],
    words: groups.map((g) => ({label: wordLabel(g.map((p) => model.piece(ids[p]))), pieces: g}))};
  if (!tokens.length) return {...message, hint: t.nothing};
  let corruption;
  try {
    corruption = corrupted(model, ids, asked.corrupted ?? null, noise, groups, t.corruption);
  } catch (err) {
    if (!(err instanceof InputError)) throw err;
    return {...message, hint: err.message};
  }
  const {ids: other, positions} = corruption;
  if (!positions.length && other.every((id, p) => id === ids[p])) return {...message, hint: t.same};
  const marked = ids.map((_, p) => (positions.includes(p) ? 1 : 0));
  const out = await model.explain("patching", {source: model.int64(ids, [1, ids.length]),
    corrupted: model.int64(other, [1, other.length]), noise: model.int64(marked, [marked.length]),
    tokens: model.int64(tokens, [tokens.length])});
  const limit = Math.min(asked.limit || Infinity, c.max_new_tokens);
  const labels = tokens.map(label);
  Object.assign(message, {
    corrupted: other.map(label),
    changed: ids.map((id, p) => id !== other[p] || positions.includes(p)),
    prefix: [label(c.bos_id), ...labels.slice(0, -1)],
    corrupted_output: model.tokenizer.decode(await decoded(model, other, out, limit), {skip_special_tokens: true}),
    steps: steps(out, labels, forcedLast(c, tokens.length, limit)),
  });
  if (run.ablated?.length) {
    const heads = describeHeads(run.ablated, c, t.heads, t.kinds);
    message.held = pyFormat(t.held, {holding: pyFormat(t.ablated, {heads})});
  }
  return message;
}

/** The source's words (core/units.py source_words): the token positions of each, its special tokens left out. */
function sourceWords(model, ids) {
  const special = ids.map((id) => model.special.has(id));
  return wordGroups(ids.map((id) => model.piece(id)), special, model.config.character_level)
    .filter((g) => !special[g[0]]);
}

/** patch/corruption.py corruption: the corrupted source's ids and the token positions with noise (sorted), from the
 * text `text` (null: the clean source itself, as the server's view asks it of a run with none typed; blank: none,
 * the clean ids) and the noise `words`; InputError with the server's words (`said`). */
function corrupted(model, ids, text, words, groups, said) {
  const blank = text !== null && BLANK.test(text);
  if (blank && !words.length) throw new InputError(said.nothing);
  const other = text === null || blank ? ids : model.source(text).ids;
  if (other.length !== ids.length) {
    throw new InputError(pyFormat(said.lengths, {corrupted: other.length, clean: ids.length}));
  }
  const wrong = words.filter((w) => !(Number.isInteger(w) && w >= 0 && w < groups.length));
  if (wrong.length) throw new InputError(pyFormat(said.word, {words: groups.length, got: wrong[0] + 1}));
  return {ids: other, positions: [...new Set(words.flatMap((w) => groups[w]))].sort((a, b) => a - b)};
}

/** Whether the model's rules force the token at the last of `T` steps: the decoding reached its `limit` and the
 * model has a token forced there (NextTokenRules.forced_last). Then every run's log p of that step is 0 (all else is
 * -inf there), so there is nothing to restore: the one rule the graph, which reads no limit, leaves to the page. */
function forcedLast(c, T, limit) {
  return T === limit && c.rules?.forced_last != null;
}

/** messages.py steps_record from the graph's outputs: per step, the token (as labelled), both log ps, and r per
 * encoder layer and source position, per decoder layer and target position up to the step, per kind, layer and
 * head; `forced`: the last step's token is forced (see forcedLast). */
function steps(out, labels, forced) {
  const T = labels.length;
  const at = ({data, dims: [L, K]}, t, n = K) => Array.from({length: L}, (_, l) =>
    Array.from({length: n}, (_, k) => (forced && t === T - 1 ? null : r(data[(l * K + k) * T + t]))));
  const logp = (data, t) => (forced && t === T - 1 ? 0 : pyRound(data[t], 5));
  return labels.map((token, t) => ({
    step: t + 1, token,
    clean_logp: logp(out.clean_logp.data, t), corrupted_logp: logp(out.corrupted_logp.data, t),
    encoder_states: at(out.encoder_states, t), decoder_states: at(out.decoder_states, t, t + 1),
    heads: Object.fromEntries(Object.entries(SITES).map(([kind, name]) => [kind, at(out[name], t)])),
  }));
}

/** What the model writes greedily from the corrupted source `ids` (transformer.patching Pair.corrupted_output), at
 * most `limit` tokens: the page's decoder graph reading the corrupted encoder's output the patching graph gave. */
async function decoded(model, ids, out, limit) {
  const tensor = ({data, dims}) => new model.ort.Tensor("float32", data, dims);
  const none = {data: null}; // what only the views read of an encoder's output
  const encoded = {encoder: none, encoder_norms: none, encoder_rollout: none, cross_norms: none,
    cross_k: tensor(out.cross_k), cross_v: tensor(out.cross_v)};
  return new LiveSession(model, ids, encoded, 1, limit).run();
}
