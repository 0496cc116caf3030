// The Flow tab's message made in the page: the flow's graph (attention_lab/page_copy/flow.py, the library's
// transformer.flow traced) gives every sublayer's edges into the rows asked for; this keeps the rows it has computed
// for a decoding and asks the graph only for those a Step adds (a row is the same in every decoding that shares its
// prefix: the decoder is causal), then cuts them into the message the server would send
// (attention_lab/flow/messages.py flow_message: the same nodes, numbers, order, floor and packing), so flow.mjs draws
// the page's message as it draws the server's. tests/test_explain_in_page.py holds the two equal, a Step at a time too.

import {bytesBase64} from "../assets/decoding.mjs";

export const FLOOR = 0.01; // flow/messages.py FLOOR: lighter edges are not sent
const SCALE = 65535; // core/payload.py SCALE
const RESIDUAL = 0, HEAD = 1, FFN = 2; // flow/messages.py KIND_CODES

const computed = new WeakMap(); // a page copy's LiveModel -> the rows it computed last: {ids, ablated, tokens, encoder, steps}

/** The Flow tab's message for the decoding `run` ({ids, tokens, ablated, key}) of the page copy `model` (LiveModel,
 * its explanations' graphs loaded). Every tab's in_page.mjs has its `made(model, run, asked)`; `asked`: what the
 * tab's own controls ask (Flow has none: its threshold prunes in the page). */
export async function made(model, run) {
  const label = (id) => model.label(id), {ids, tokens, key} = run, c = model.config;
  if (!tokens.length) { // nothing written: the server's empty message (flow/feature.py)
    return {key, tokens: [], layers: [c.n_encoder_layers, c.n_decoder_layers], heads: c.n_heads, source: [],
      inputs: [], written: [], floor: 0, count: 0, edges: "", op: "flow"};
  }
  return flowMessage(await rowsOf(model, ids, tokens, run.ablated ?? []), {key, ids, tokens, label, bos: c.bos_id});
}

/** The rows of the decoding of `ids` that wrote `tokens` with the heads `ablated`: {encoder: the encoder's outputs
 * of the flow's graph (every row), steps: per decoder position, its rows (decoderRows)}, reusing what the model's
 * last call computed for the same source and heads: decoder position p reads the decoder inputs up to p (the start
 * token, then tokens[0..p-1]), so its rows hold while those are the same. */
export async function rowsOf(model, ids, tokens, ablated) {
  const last = computed.get(model), S = ids.length, T = tokens.length;
  const same = last && sameList(last.ids, ids) && JSON.stringify(last.ablated) === JSON.stringify(ablated);
  const most = same ? Math.min(last.steps.length, T) : 0;
  let shared = 0; // decoder positions whose rows hold
  while (shared < most && (shared === 0 || last.tokens[shared - 1] === tokens[shared - 1])) shared += 1;
  const rows = {encoder: same ? last.encoder : null, steps: same ? last.steps.slice(0, shared) : []};
  if (shared < T) {
    // with the encoder's rows kept, its last row alone is asked (and left): a window of no rows fails in ONNX Runtime
    // Web 1.30 ("Shape mismatch attempting to re-use buffer"), where Python's 1.32 gives it
    const keep = model.keep(ablated), firstSource = same ? S - 1 : 0;
    const outputs = await model.explain("flow", {source: model.int64(ids, [1, S]), tokens: model.int64(tokens, [T]),
      keep_encoder: keep.encoder, keep_self: keep.decoder_self, keep_cross: keep.cross,
      first_source: model.int64([firstSource], []), first_step: model.int64([shared], [])});
    rows.encoder ??= outputs;
    rows.steps.push(...decoderRows(outputs, shared));
  }
  computed.set(model, {ids: [...ids], ablated, tokens: [...tokens], ...rows});
  return rows;
}

const sameList = (a, b) => a.length === b.length && a.every((x, i) => x === b[i]);

/** The decoder rows of the flow graph's `outputs`, which begin at position `first`: per position, per layer (of Ld)
 * its self-attention's residual and heads (H × K, K the keys the graph was run with: the positions up to that run's
 * last), its cross-attention's residual and heads (H × S) and its feed-forward node's residual share. */
export function decoderRows(outputs, first) {
  const [Ld, n, H, K] = outputs.self_heads.dims, S = outputs.cross_heads.dims[3];
  const row = (tensor, l, i, size) => tensor.data.subarray(((l * n) + i) * size, ((l * n) + i + 1) * size);
  return Array.from({length: n}, (_, i) => ({
    position: first + i, keys: K,
    self: Array.from({length: Ld}, (_, l) => ({residual: outputs.self_residual.data[l * n + i],
      heads: row(outputs.self_heads, l, i, H * K)})),
    cross: Array.from({length: Ld}, (_, l) => ({residual: outputs.cross_residual.data[l * n + i],
      heads: row(outputs.cross_heads, l, i, H * S)})),
    ffn: Array.from({length: Ld}, (_, l) => outputs.decoder_ffn.data[l * n + i]),
  }));
}

/** The Flow message of the decoding of `ids` that wrote `tokens`, from its rows (rowsOf: the flow graph's encoder
 * outputs and each decoder position's rows), with `label(id)` the page's token labels and `key` the decoding's. */
export function flowMessage({encoder: o, steps}, {key, ids, tokens, label, bos}) {
  const S = ids.length, T = tokens.length;
  const [Le, , H] = o.encoder_heads.dims, Ld = steps[0].self.length;
  const rows = [];
  const add = (to, from, weight, kind, head) => {
    if (weight >= FLOOR) rows.push([to, from, weight, kind, head]);
  };
  const enc = (level, p) => level * S + p;
  const dec = (level, p) => (2 * Le + 1) * S + level * T + p;
  const memory = (p) => enc(2 * Le, p);
  for (let l = 0; l < Le; l++) {
    const below = (p) => enc(2 * l, p);
    for (let i = 0; i < S; i++) {
      add(enc(2 * l + 1, i), below(i), o.encoder_residual.data[l * S + i], RESIDUAL, 0);
      for (let h = 0; h < H; h++) {
        const row = ((l * S + i) * H + h) * S;
        for (let j = 0; j < S; j++) add(enc(2 * l + 1, i), below(j), o.encoder_heads.data[row + j], HEAD, h + 1);
      }
    }
    for (let i = 0; i < S; i++) ffn(add, enc(2 * l + 2, i), enc(2 * l + 1, i), o.encoder_ffn.data[l * S + i]);
  }
  for (let l = 0; l < Ld; l++) {
    const below = (p) => dec(3 * l, p), own = (p) => dec(3 * l + 1, p);
    for (let i = 0; i < T; i++) { // self-attention: the positions up to the query's own
      const {residual, heads} = steps[i].self[l], K = steps[i].keys;
      add(own(i), below(i), residual, RESIDUAL, 0);
      for (let h = 0; h < H; h++) for (let j = 0; j <= i; j++) add(own(i), below(j), heads[h * K + j], HEAD, h + 1);
    }
    for (let i = 0; i < T; i++) { // cross-attention: every source position
      const {residual, heads} = steps[i].cross[l];
      add(dec(3 * l + 2, i), own(i), residual, RESIDUAL, 0);
      for (let h = 0; h < H; h++) for (let j = 0; j < S; j++) add(dec(3 * l + 2, i), memory(j), heads[h * S + j], HEAD, h + 1);
    }
    for (let i = 0; i < T; i++) ffn(add, dec(3 * l + 3, i), dec(3 * l + 2, i), steps[i].ffn[l]);
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

/** A feed-forward node's two edges from the stream before it: the residual's share, and the block's. */
function ffn(add, to, from, share) {
  add(to, from, share, RESIDUAL, 0);
  add(to, from, 1 - share, FFN, 0);
}
