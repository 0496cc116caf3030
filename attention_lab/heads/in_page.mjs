// The Heads tab's measure of every head made in the page, from the page copy's ablations graph
// (attention_lab/page_copy/ablations.py: the library's teacher-forced pass with heads removed, a batch row per set,
// and its KL): each head's importance, the mean over the decoding's steps of KL(every head kept ‖ that head removed),
// as heads/ablation.py `importance` gives it. tests/test_heads_in_page.py holds the two equal.

import {stepRules} from "../page_copy/model.mjs";

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
  for (let at = 0; at < heads.length; at += per) {
    const part = heads.slice(at, at + per), R = part.length;
    const masks = Object.fromEntries(KINDS.map((k) => [k, new Float32Array(R * layers[k] * H).fill(1)]));
    part.forEach(([kind, layer, head], r) => { masks[kind][(r * layers[kind] + layer) * H + head] = 0; });
    const keep = (kind) => new model.ort.Tensor("float32", masks[kind], [R, layers[kind], H]);
    const out = await model.explain("ablations", {...fixed, keep_encoder: keep("encoder"),
      keep_self: keep("decoder_self"), keep_cross: keep("cross")});
    part.forEach(([kind, layer, head], r) => {
      let sum = 0;
      for (let t = 0; t < T; t++) sum += out.kl.data[r * T + t];
      grids[kind][layer][head] = sum / T;
    });
  }
  return grids;
}
