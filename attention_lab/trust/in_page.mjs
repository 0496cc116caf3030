// The Trust tab's message made in the page, by ALTI+ (the tab's default method): the readings' graph
// (page_copy/readings.py) gives, over one teacher-forced pass, ALTI+'s contributions, each token's log p and each
// decoder layer's cross-attention; this adds what attention_lab/trust adds on the server (score.py, sentence.py,
// flags.py, messages.py record, feature.py scored_message): the token the rules force at the decoding's limit, means,
// sums, thresholds and the attention distances (wasserstein.mjs), with the server's texts (Feature.texts, textsOf)
// and rounding, so that trust.mjs draws it as it draws the server's. tests/test_trust_in_page.py holds the two equal.
// The attribution methods (gradients), and a pasted translation where the page's tokenizer is not the model's target
// side's (a transformers model's: Marian's own target vocabulary, BART's <s>), are the server's: `made` gives null.

import {pyFormat, pyRound} from "../assets/format.mjs";
import {textsOf} from "../assets/here.mjs";
import {wordGroups, wordLabel} from "../page_copy/pieces.mjs";
import {readReference, referenceToData, toUnif, wassCombo} from "./wasserstein.mjs";

const references = new WeakMap(); // a copy's LiveModel -> its reference set (a promise), read once
const number = (v) => (Number.isFinite(v) ? pyRound(v, 6) : null); // messages.py _number
const mean = (values) => values.reduce((a, b) => a + b, 0) / values.length;

/** The Trust message of the decoding `run` ({ids, tokens, ablated, key}) of the page copy `model`, as the server's
 * scored_message makes it for what the tab asks (`asked`: {method, pasted: the translation scored, null for the
 * output; limit: the most steps the decoding may take, the model's by default}); null where the server makes it. */
export async function made(model, run, asked = {}) {
  const t = textsOf("trust"), c = model.config, {ids, tokens} = run;
  const method = asked.method ?? t.method, pasted = asked.pasted ?? null, own = pasted === null;
  if (method !== t.method || (!own && c.marks_source)) return null;
  const message = {pasted, method, title: t.title, tokens: [...tokens], note: t.note, reading: {...t.reading},
    words: scoreWords(model, ids), source: ids.map((id) => model.label(id)), op: "trust"};
  const {ids: forced, hint} = own ? {ids: tokens} : targetIds(model, pasted, t);
  if (hint) return {...message, hint};
  if (!forced.length) return {...message, hint: t.nothing};
  const ablated = own ? run.ablated || [] : [];
  const outputs = await model.read(ids, forced, ablated);
  const limit = Math.min((own && asked.limit) || Infinity, c.max_new_tokens); // DecodingSession's
  const scored = score(model, ids, forced, outputs, limit, await referenceOf(model, t.reference), t);
  Object.assign(message, record(model, scored), {labels: forced.map((id) => model.label(id)),
    reads: scored.reads.map((r) => pyRound(r, 4)), uncovered_words: scored.uncovered});
  if (own && ablated.length) {
    message.held = pyFormat(t.held, {held: pyFormat(t.ablated, {heads: describeHeads(ablated, c, t)})});
  }
  return message;
}

/** The source's words as the tab shows them (feature.py score_words): a label and the token positions of its
 * pieces, its special tokens left out (core/units.py source_words). */
function scoreWords(model, ids) {
  const pieces = ids.map((id) => model.piece(id));
  return words(model, ids).map((g) => ({label: wordLabel(g.map((p) => pieces[p])), pieces: g}));
}

function words(model, ids) {
  const special = ids.map((id) => model.special.has(id));
  return wordGroups(ids.map((id) => model.piece(id)), special, model.config.character_level)
    .filter((g) => !special[g[0]]);
}

/** A pasted `text` as our tokenizers write the target side (run/target.py target_ids: the source's one encoding, the
 * end token last), {ids}, or {hint}: the server's refusal. */
function targetIds(model, text, t) {
  const c = model.config, said = t.pasted, unknown = c.alphabet ? model.unknown(text) : [];
  if (unknown.length) {
    const what = said.what.toLowerCase();
    return {hint: pyFormat(said.unknown, {alphabet: c.alphabet, char: model.describe(unknown[0]), what})};
  }
  const ids = model.ids(text), own = c.max_new_tokens, most = Math.min(own, t.numbers.most);
  if (!ids.length || ids.at(-1) !== c.eos_id) ids.push(c.eos_id);
  if (ids.length > most) return {hint: pyFormat(said.too_long, {what: said.what, n: ids.length, who: said.who, most, own})};
  return {ids};
}

/** The copy's correct translations (trust/reference.py: the file `file`, where the copy has it), or null for a
 * model without: read once. */
function referenceOf(model, file) {
  if (!model.config.files?.includes(file)) return Promise.resolve(null);
  if (!references.has(model)) {
    const read = model.file(file).then((bytes) => readReference(JSON.parse(new TextDecoder().decode(bytes))));
    references.set(model, read.catch((err) => {
      references.delete(model); // asked again next time
      throw err;
    }));
  }
  return references.get(model);
}

/** score.py's score of `tokens` from the graph's `outputs`, under the rules of a decoding of at most `limit` steps:
 * per step {token, logp, share, source, prefix}; cross (T, S), mean over layers and heads; the words, their reads,
 * the uncovered; each layer's mass (L, S) and its distances; the flags. */
function score(model, ids, tokens, outputs, limit, reference, t) {
  const c = model.config, S = ids.length, T = tokens.length, n = t.numbers;
  const logps = Array.from(outputs.log_probs.data, Number);
  const last = c.rules?.forced_last;
  if (last != null && limit >= 1 && limit <= T) logps[limit - 1] = tokens[limit - 1] === last ? 0 : -Infinity;
  const [Ld] = outputs.cross_mean.dims, layer = outputs.cross_mean.data; // (Ld, T, S)
  const at = (l, step, s) => layer[(l * T + step) * S + s];
  const cross = Array.from({length: T}, (_, step) => Array.from({length: S}, (_, s) => {
    let total = 0;
    for (let l = 0; l < Ld; l++) total += at(l, step, s);
    return total / Ld;
  }));
  const source = outputs.alti_source.data, prefix = outputs.alti_prefix.data; // (T, S), (T, T)
  const steps = tokens.map((token, step) => {
    const src = Array.from(source.subarray(step * S, (step + 1) * S), Number);
    const pre = Array.from(prefix.subarray(step * T, step * T + step + 1), Number);
    const from = src.reduce((a, v) => a + Math.abs(v), 0), before = pre.reduce((a, v) => a + Math.abs(v), 0);
    return {step: step + 1, token, logp: logps[step], share: from + before > 0 ? from / (from + before) : NaN,
      source: src, prefix: pre};
  });
  const groups = words(model, ids);
  const reads = groups.map((g) => cross.reduce((total, row) => total + g.reduce((a, p) => a + row[p], 0), 0));
  const uncovered = reads.flatMap((read, w) => (read < n.covered ? [w] : []));
  const mass = Array.from({length: Ld}, (_, l) => Array.from({length: S}, (_, s) => {
    let total = 0;
    for (let step = 0; step < T; step++) total += at(l, step, s);
    return total / T;
  }));
  const unif = mass.map(toUnif);
  const data = reference ? referenceToData(reference, mass, T, n) : mass.map(() => NaN);
  const combo = reference ? wassCombo(unif.at(-1), data.at(-1), reference.rules.at(-1)) : NaN;
  const shares = steps.map((s) => s.share).filter((v) => !Number.isNaN(v));
  const scored = {ids, tokens, steps, cross, groups, reads, uncovered, unif, data, combo,
    meanLogp: mean(logps), share: shares.length ? mean(shares) : NaN,
    coverage: groups.length ? 1 - uncovered.length / groups.length : 1};
  scored.flags = flags(model, scored, t);
  return scored;
}

/** flags.py's find_flags: forbidden tokens, uncovered words, low source shares, attention collapsed onto the
 * source's end token, in that order, each with the server's line. */
function flags(model, scored, t) {
  const {ids, tokens, steps, cross, groups, reads} = scored, n = t.numbers, eos = model.config.eos_id;
  const labels = tokens.map((id) => model.label(id)), pieces = ids.map((id) => model.piece(id));
  const end = ids.includes(eos) ? ids.lastIndexOf(eos) : ids.length - 1; // the source's end token (flags.py)
  const flag = (kind, at, values) => ({kind, at, message: pyFormat(t.flags[kind], values)});
  return [
    ...steps.filter((s) => !Number.isFinite(s.logp))
      .map((s) => flag("forbidden", s.step, {label: labels[s.step - 1], step: s.step})),
    ...scored.uncovered.map((w) => flag("uncovered", w + 1,
      {word: wordLabel(groups[w].map((p) => pieces[p])), read: reads[w]})),
    ...steps.filter((s) => s.token !== eos && s.share < n.low_source) // NaN (no values) compares false
      .map((s) => flag("low_source", s.step, {step: s.step, label: labels[s.step - 1], share: s.share})),
    ...cross.flatMap((row, step) => (row[end] >= n.collapse && tokens[step] !== eos && !labels[step].startsWith("##")
      ? [flag("end_collapse", step + 1, {step: step + 1, label: labels[step], weight: row[end]})] : [])),
  ];
}

/** messages.py record: the scores as the message carries them, null for -inf and for values there are none of. */
function record(model, s) {
  const piece = (id) => model.piece(id), numbers = (values) => values.map(number);
  return {
    source_tokens: s.ids.map(piece), target_tokens: s.tokens.map(piece),
    steps: s.steps.map((step) => ({step: step.step, token: piece(step.token), logp: number(step.logp),
      source_share: number(step.share), source: numbers(step.source), prefix: numbers(step.prefix)})),
    sentence: {mean_logp: number(s.meanLogp), source_share: number(s.share), coverage: number(s.coverage),
      uncovered: s.uncovered.map((w) => wordLabel(s.groups[w].map((p) => piece(s.ids[p])))),
      wass_to_unif: numbers(s.unif), wass_to_data: numbers(s.data), wass_combo: number(s.combo)},
    flags: s.flags,
  };
}

/** core/naming.py describe_heads of the heads `ablated` ([kind, layer, head], 0-based), in the server's words. */
function describeHeads(ablated, c, t) {
  const parts = [], said = t.heads;
  for (const [kind, name] of Object.entries(t.kinds)) { // the library's order
    const layers = new Map(), L = kind === "encoder" ? c.n_encoder_layers : c.n_decoder_layers;
    const mine = [...new Set(ablated.filter((h) => h[0] === kind).map(([, l, h]) => l * c.n_heads + h))];
    for (const index of mine.sort((a, b) => a - b)) {
      const l = Math.floor(index / c.n_heads);
      layers.set(l, [...(layers.get(l) || []), (index % c.n_heads) + 1]);
    }
    const full = [...layers].filter(([, heads]) => heads.length === c.n_heads).map(([l]) => l);
    if (full.length === L) {
      parts.push(pyFormat(said.kind, {name}));
      continue;
    }
    for (const [l, heads] of layers) {
      const which = said[full.includes(l) ? "all" : heads.length === 1 ? "one" : "some"];
      parts.push(pyFormat(said.layer, {name, layer: l + 1, which: pyFormat(which, {numbers: heads.join(", ")})}));
    }
  }
  return parts.join("; ");
}
