// The Heads tab's measure of every head made in the page, from the page copy's ablations graph
// (attention_lab/page_copy/ablations.py: the library's teacher-forced pass with heads removed, a batch row per set,
// and its KL): each head's importance, the mean over the decoding's steps of KL(every head kept ‖ that head removed),
// as heads/ablation.py `importance` gives it, and what removing a set of heads changes at each step (Ablate's
// effects, heads/effects.py). tests/test_heads_in_page.py holds each equal to the server's.

import {pyRound} from "../assets/format.mjs";
import {stepRules} from "../page_copy/model.mjs";

const KINDS = ["encoder", "decoder_self", "cross"];
const LOGITS = 2 ** 24; // floats of next-token log-probabilities one run of the graph may hold (64 MB): rows in parts

/** The ablations graph's outputs for the decoding of `ids` that wrote `tokens`, limited to `limit` steps, with
 * `rows` sets of heads removed ([[kind, layer, head], ...] each; a head named twice in a set is removed once). */
async function removed(model, ids, tokens, limit, rows) {
  const c = model.config, H = c.n_heads, S = ids.length, T = tokens.length, R = rows.length;
  const layers = {encoder: c.n_encoder_layers, decoder_self: c.n_decoder_layers, cross: c.n_decoder_layers};
  const masks = Object.fromEntries(KINDS.map((k) => [k, new Float32Array(R * layers[k] * H).fill(1)]));
  rows.forEach((heads, r) => heads.forEach(([kind, layer, head]) => {
    masks[kind][(r * layers[kind] + layer) * H + head] = 0;
  }));
  const keep = (kind) => new model.ort.Tensor("float32", masks[kind], [R, layers[kind], H]);
  return model.explain("ablations", {source: model.int64(ids, [1, S]), tokens: model.int64(tokens, [T]),
    rules: stepRules(model, T, Math.min(limit || Infinity, c.max_new_tokens)), keep_encoder: keep("encoder"),
    keep_self: keep("decoder_self"), keep_cross: keep("cross")});
}

/** Ablate's effects message (heads/effects.py Effects) for the decoding `run` ({ids, tokens}: the decoding before
 * the ablation) of the page copy `model`, with the heads `asked.heads` ([[kind, layer, head], ...]) removed, limited
 * to `asked.limit` steps: at each step, teacher-forced along its tokens, KL(original ‖ ablated), whether the ablated
 * top token is another, and the ablated top 3; `asked.held` says the interventions in words. */
export async function headEffects(model, run, asked = {}) {
  const {ids, tokens} = run, T = tokens.length, steps = [];
  if (T) {
    const out = await removed(model, ids, tokens, asked.limit, [asked.heads ?? []]), k = out.top_ids.dims[2];
    for (let t = 0; t < T; t++) {
      const ids3 = [...out.top_ids.data.subarray(t * k, (t + 1) * k)].map(Number);
      const probs = out.top_probs.data.subarray(t * k, (t + 1) * k);
      steps.push({step: t + 1, label: model.label(tokens[t]), kl: pyRound(out.kl.data[t], 4),
        changed: ids3[0] !== tokens[t], top: ids3.map((id, i) => [model.label(id), pyRound(probs[i], 6)])});
    }
  }
  return {held: asked.held ?? "", steps, op: "effects"};
}

/** {kind: [layer][head]} every head's importance for the decoding `run` ({ids, tokens}) of the page copy `model`
 * (its explanations' graphs loaded), the decoding limited to `asked.limit` steps (its rules: a token forced at the
 * limit); the decoding's own ablations aside, as the server's summary measures the decoding without them. */
export async function headImportance(model, run, asked = {}) {
  const c = model.config, H = c.n_heads, {ids, tokens} = run, T = tokens.length;
  const layers = {encoder: c.n_encoder_layers, decoder_self: c.n_decoder_layers, cross: c.n_decoder_layers};
  const grids = Object.fromEntries(KINDS.map((k) => [k, Array.from({length: layers[k]}, () => new Array(H).fill(0))]));
  if (!T) return grids;
  const heads = KINDS.flatMap((kind) => [...Array(layers[kind] * H).keys()].map((i) => [kind, Math.floor(i / H), i % H]));
  const per = Math.max(1, Math.floor(LOGITS / (T * c.tgt_vocab_size)));
  for (let at = 0; at < heads.length; at += per) {
    const part = heads.slice(at, at + per);
    const out = await removed(model, ids, tokens, asked.limit, part.map((head) => [head]));
    part.forEach(([kind, layer, head], r) => {
      let sum = 0;
      for (let t = 0; t < T; t++) sum += out.kl.data[r * T + t];
      grids[kind][layer][head] = sum / T;
    });
  }
  return grids;
}
