// The Flow tab's message made in the page: the explanations' graph (attention_lab/page_copy/analyses.py, the
// library's transformer.flow traced) gives every sublayer's edges over the whole decoding; this cuts them into the
// message the server would send (attention_lab/flow/messages.py flow_message: the same nodes, numbers, order, floor
// and packing), so flow.mjs draws the page's message as it draws the server's. tests/test_explain_in_page.py holds
// the two equal.

import {bytesBase64} from "../assets/decoding.mjs";

export const FLOOR = 0.01; // flow/messages.py FLOOR: lighter edges are not sent
const SCALE = 65535; // core/payload.py SCALE
const RESIDUAL = 0, HEAD = 1, FFN = 2; // flow/messages.py KIND_CODES

/** The Flow tab's message for the decoding `run` ({ids, tokens, ablated, key}) of the page copy `model` (LiveModel,
 * its explanations' graphs loaded). Every tab's in_page.mjs has its `made(model, run, asked)`; `asked`: what the
 * tab's own controls ask (Flow has none: its threshold prunes in the page). */
export async function made(model, run) {
  const label = (id) => model.label(id), {ids, tokens, key} = run, c = model.config;
  if (!tokens.length) { // nothing written: the server's empty message (flow/feature.py)
    return {key, tokens: [], layers: [c.n_encoder_layers, c.n_decoder_layers], heads: c.n_heads, source: [],
      inputs: [], written: [], floor: 0, count: 0, edges: "", op: "flow"};
  }
  return flowMessage(await model.read(ids, tokens, run.ablated), {key, ids, tokens, label, bos: c.bos_id});
}

/** The Flow message of the decoding of `ids` that wrote `tokens`, from the graph's `outputs` (LiveModel.read),
 * with `label(id)` the page's token labels and `key` the decoding's. */
export function flowMessage(outputs, {key, ids, tokens, label, bos}) {
  const S = ids.length, T = tokens.length;
  const [Le, , H] = outputs.encoder_heads.dims, Ld = outputs.self_heads.dims[0];
  const rows = [];
  const add = (to, from, weight, kind, head) => {
    if (weight >= FLOOR) rows.push([to, from, weight, kind, head]);
  };
  const enc = (level, p) => level * S + p;
  const dec = (level, p) => (2 * Le + 1) * S + level * T + p;
  const attention = (number, level, below, keys, n, residual, heads, layer, K, causal) => {
    for (let i = 0; i < n; i++) {
      const at = number(level, i);
      add(at, below(i), residual.data[layer * n + i], RESIDUAL, 0);
      for (let h = 0; h < H; h++) {
        const row = ((layer * n + i) * H + h) * K;
        for (let j = 0; j < (causal ? i + 1 : K); j++) add(at, keys(j), heads.data[row + j], HEAD, h + 1);
      }
    }
  };
  const ffn = (number, level, n, residual, layer) => {
    for (let i = 0; i < n; i++) {
      const share = residual.data[layer * n + i];
      add(number(level, i), number(level - 1, i), share, RESIDUAL, 0);
      add(number(level, i), number(level - 1, i), 1 - share, FFN, 0);
    }
  };
  const o = outputs;
  for (let l = 0; l < Le; l++) {
    const below = (p) => enc(2 * l, p);
    attention(enc, 2 * l + 1, below, below, S, o.encoder_residual, o.encoder_heads, l, S, false);
    ffn(enc, 2 * l + 2, S, o.encoder_ffn, l);
  }
  const memory = (p) => enc(2 * Le, p);
  for (let l = 0; l < Ld; l++) {
    const below = (p) => dec(3 * l, p), own = (p) => dec(3 * l + 1, p);
    attention(dec, 3 * l + 1, below, below, T, o.self_residual, o.self_heads, l, T, true);
    attention(dec, 3 * l + 2, own, memory, T, o.cross_residual, o.cross_heads, l, S, false);
    ffn(dec, 3 * l + 3, T, o.decoder_ffn, l);
  }
  const packed = new DataView(new ArrayBuffer(8 * rows.length));
  rows.forEach(([to, from, weight, kind, head], i) => {
    packed.setUint16(8 * i, to, true);
    packed.setUint16(8 * i + 2, from, true);
    packed.setUint16(8 * i + 4, Math.round(Math.min(1, Math.max(0, weight)) * SCALE), true);
    packed.setUint8(8 * i + 6, kind);
    packed.setUint8(8 * i + 7, head);
  });
  return {
    key, tokens: [...tokens], layers: [Le, Ld], heads: H,
    source: ids.map(label), inputs: [bos, ...tokens.slice(0, -1)].map(label), written: tokens.map(label),
    floor: FLOOR, count: rows.length, edges: bytesBase64(new Uint8Array(packed.buffer)), op: "flow",
  };
}
