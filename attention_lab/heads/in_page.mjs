// The Heads tab made in the page: its summary of this sentence (`made`, the message heads/feature.py `summary`
// sends) from the weights the page's decoding holds and the page copy's ablations graph
// (attention_lab/page_copy/ablations.py: the library's teacher-forced pass with heads removed, a batch row per set,
// and its KL), which measures each head's importance (`headImportance`), the mean over the decoding's steps of
// KL(every head kept ‖ that head removed), as heads/ablation.py `importance` gives it. tests/test_heads_in_page.py
// holds the page's summary equal to the server's; and Ablate's `effects`, from the same graph, with heads removed
// throughout (heads/ablate.mjs makes Ablate itself). Editing attention is the server's.

import {pyRound} from "../assets/format.mjs";
import {textsOf} from "../assets/here.mjs";
import {runAll} from "../page_copy/helper.mjs";
import {stepRules} from "../page_copy/model.mjs";
import {headSummaries} from "../core/summaries.mjs";
import {decodedAgain} from "../decoding/again.mjs";

const KINDS = ["encoder", "decoder_self", "cross"];
const LOGITS = 2 ** 24; // floats of next-token log-probabilities one run of the graph may hold (64 MB): rows in parts

/** {kind: [layer][head]} every head's importance for the decoding `run` ({ids, tokens}) of the page copy `model`
 * (its explanations' graphs loaded), the decoding limited to `asked.limit` steps (its rules: a token forced at the
 * limit); the decoding's own ablations aside, as the server's summary measures the decoding without them. */
export async function headImportance(model, run, asked = {}) {
  const c = model.config, H = c.n_heads, {ids, tokens} = run, S = ids.length, T = tokens.length;
  const layers = {encoder: c.n_encoder_layers, decoder_self: c.n_decoder_layers, cross: c.n_decoder_layers};
  const grids = Object.fromEntries(KINDS.map((k) => [k, Array.from({length: layers[k]}, () => new Array(H).fill(0))]));
  if (!T) return grids;
  const heads = KINDS.flatMap((kind) => [...Array(layers[kind] * H).keys()].map((i) => [kind, Math.floor(i / H), i % H]));
  const fixed = {source: model.int64(ids, [1, S]), tokens: model.int64(tokens, [T]),
    rules: stepRules(model, T, Math.min(asked.limit || Infinity, c.max_new_tokens))};
  const per = Math.max(1, Math.floor(LOGITS / (T * c.tgt_vocab_size)));
  // the encoder's heads, a row each; then the decoder's, whose rows share one encoder pass (every encoder head kept)
  const parts = [];
  for (const group of [heads.filter((h) => h[0] === "encoder"), heads.filter((h) => h[0] !== "encoder")]) {
    for (let at = 0; at < group.length; at += per) parts.push(group.slice(at, at + per));
  }
  const inputs = parts.map((part) => {
    const R = part.length, rows = (k) => (k === "encoder" && part[0][0] !== "encoder" ? 1 : R);
    const masks = Object.fromEntries(KINDS.map((k) => [k, new Float32Array(rows(k) * layers[k] * H).fill(1)]));
    part.forEach(([kind, layer, head], r) => { masks[kind][(r * layers[kind] + layer) * H + head] = 0; });
    const keep = (kind) => new model.ort.Tensor("float32", masks[kind], [rows(kind), layers[kind], H]);
    return {...fixed, keep_encoder: keep("encoder"), keep_self: keep("decoder_self"), keep_cross: keep("cross")};
  });
  // the parts at once, on the page's thread and the graph's helper thread (page_copy/helper.mjs) where it has one
  const outs = await runAll(model, "ablations", inputs);
  parts.forEach((part, i) => {
    const out = outs[i];
    part.forEach(([kind, layer, head], r) => {
      let sum = 0;
      for (let t = 0; t < T; t++) sum += out.kl.data[r * T + t];
      grids[kind][layer][head] = sum / T;
    });
  });
  return grids;
}

/** Ablate's effects message (heads/feature.py `effects`, heads/effects.py Effects) for the decoding `run` of the page
 * copy `model`: while heads are ablated (`run.ablated`) and the decoding before the last change is kept
 * (`run.before`: {tokens}), at each step of that decoding, teacher-forced along its tokens and limited to `run.limit`
 * steps, KL(original ‖ ablated), whether the ablated top token is another, and the ablated top 3; `run.held` says
 * the ablation in words. Else the hint the server sends. */
export async function effects(model, run) {
  const t = textsOf("heads"), ablated = run.ablated ?? [];
  if (!ablated.length || !run.before) return {text: t.no_effects, op: "none"};
  const c = model.config, ids = run.ids, tokens = run.before.tokens, T = tokens.length, steps = [];
  if (T) {
    const masks = model.keep(ablated), row = (mask) => new model.ort.Tensor("float32", mask.data, [1, ...mask.dims]);
    const out = await model.explain("ablations", {source: model.int64(ids, [1, ids.length]),
      tokens: model.int64(tokens, [T]), rules: stepRules(model, T, Math.min(run.limit || Infinity, c.max_new_tokens)),
      keep_encoder: row(masks.encoder), keep_self: row(masks.decoder_self), keep_cross: row(masks.cross)});
    const k = out.top_ids.dims[2];
    for (let s = 0; s < T; s++) {
      const top = [...out.top_ids.data.subarray(s * k, (s + 1) * k)].map(Number);
      const probs = out.top_probs.data.subarray(s * k, (s + 1) * k);
      steps.push({step: s + 1, label: model.label(tokens[s]), kl: pyRound(out.kl.data[s], 4),
        changed: top[0] !== tokens[s], top: top.map((id, i) => [model.label(id), pyRound(probs[i], 6)])});
    }
  }
  return {held: run.held ?? "", steps, op: "effects"};
}

/** The Heads tab's summary of the decoding `run` ({ids, tokens, limit, session: the LiveSession that wrote them,
 * where the page holds one; after an Ablate, `plain`: the decoding before it, which is summarised}) of the page copy
 * `model`, limited to `asked.limit` steps (the run's own by default),
 * as heads/feature.py `summary` makes it: each head's entropy, weight on special tokens and, where the model's card
 * names a gold alignment, alignment accuracy, from the weights of the decoding without ablations
 * (core/summaries.py head_summaries), and its importance (headImportance), in core/grids.py summary_data's rows,
 * with the server's texts (Feature.texts) and rounding. */
export async function made(model, run, asked = null) {
  const t = textsOf("heads");
  if (run.ablated?.length && run.plain) run = {...run, tokens: run.plain.tokens, session: run.plain, ablated: []};
  if (!run.tokens.length) return {text: t.nothing, op: "none"};
  const limit = Math.min(asked?.limit || run.limit || Infinity, model.config.max_new_tokens);
  await painted(); // the decoding drawn first: the runtime holds the page's thread while it measures every head
  const importance = await headImportance(model, run, {limit});
  const summaries = headSummaries(model, run.ids, await decodedAgain(model, run, limit));
  return summaryMessage(model.config, summaries, importance, t);
}

/** A promise kept once the browser has painted the next frame (at once where there are no frames: Node; at most
 * 100 ms in a hidden tab, which paints none). */
function painted() {
  if (!globalThis.requestAnimationFrame) return Promise.resolve();
  return new Promise((resolve) => {
    requestAnimationFrame(() => setTimeout(resolve, 0));
    setTimeout(resolve, 100);
  });
}

/** core/grids.py summary_data: one row per metric with a value, each a grid per kind (layers down, heads across),
 * values rounded to 4 places, null where a head has none. */
function summaryMessage(c, summaries, importance, t) {
  const layers = Math.max(c.n_encoder_layers, c.n_decoder_layers), H = c.n_heads;
  const metrics = [];
  for (const [key, [name, note, colouring]] of Object.entries(t.metrics)) {
    const grids = Object.fromEntries(KINDS.map((kind) => [kind, [...Array(layers).keys()].map((l) =>
      [...Array(H).keys()].map((h) => {
        const v = key === "importance" ? importance[kind][l]?.[h] : summaries[kind][l]?.[h]?.[key];
        return v == null || Number.isNaN(v) ? null : pyRound(v, 4);
      }))]));
    if (Object.values(grids).some((g) => g.some((row) => row.some((v) => v !== null)))) {
      metrics.push({key, name, note, colouring, grids});
    }
  }
  return {title: t.title, kinds: [...KINDS], short: {...t.short}, layers, heads: H, metrics, op: "summary"};
}
