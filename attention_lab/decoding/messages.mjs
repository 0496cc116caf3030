// A live decoding as the page's messages (attention_lab/decoding/messages.py, in the checked-in schema
// attention_lab/assets/messages.schema.json): the whole decoding (payload.Decoding), a step more, a step fewer. The
// app's own modules draw them, as they draw the server's. Weights and rollout shares travel as 16-bit integers and
// value norms as 32-bit floats, base64 of their little-endian bytes, as payload.py sends them.

import {bytesBase64 as base64} from "../assets/decoding.mjs";
import {labelledPieces} from "../page_copy/pieces.mjs";

const SCALE = 65535;

/** Numbers in [0, 1] as base64 of little-endian uint16, round(w · 65535) (payload.q16). */
export function q16(values) {
  const view = new DataView(new ArrayBuffer(2 * values.length));
  for (let i = 0; i < values.length; i++) view.setUint16(2 * i, Math.round(Math.min(1, Math.max(0, values[i])) * SCALE), true);
  return base64(new Uint8Array(view.buffer));
}

/** Any numbers as base64 of little-endian float32 (payload.f32). */
export function f32(values) {
  const view = new DataView(new ArrayBuffer(4 * values.length));
  for (let i = 0; i < values.length; i++) view.setFloat32(4 * i, values[i], true);
  return base64(new Uint8Array(view.buffer));
}

const round6 = (p) => Math.round(p * 1e6) / 1e6;

function stepData(session, t) {
  const m = session.model, step = session.steps[t];
  const row = step.rollout;
  const flat = new Float64Array(row.length * (t + 1));
  row.forEach((r, l) => flat.set(r, l * (t + 1)));
  return {
    token: step.token,
    label: m.label(step.token),
    forced: step.forced,
    prob: round6(step.prob),
    top: step.topIds.map((id, i) => [m.label(id), id, round6(step.topProbs[i])]).filter(([, , p]) => p > 0),
    cross: q16(step.cross),
    self: q16(step.self),
    self_norms: f32(step.selfNorms),
    self_rollout: q16(flat),
  };
}

function tokens(session, ids) {
  const m = session.model;
  return labelledPieces(ids.map((id) => m.piece(id)), ids.map((id) => m.special.has(id)), m.config.character_level);
}

/** Everything the page draws `session` from (payload.Decoding). */
export function decoding(session) {
  const m = session.model, c = m.config;
  return {
    model: c.name,
    layers: [c.n_encoder_layers, c.n_decoder_layers],
    heads: c.n_heads,
    character_level: c.character_level,
    bos: m.piece(c.bos_id),
    src: tokens(session, session.srcIds),
    out: tokens(session, session.tokens),
    encoder: q16(session.encoder),
    encoder_norms: f32(session.encoderNorms),
    encoder_rollout: q16(session.encoderRollout),
    cross_norms: session.steps.length ? f32(session.crossNorms) : null,
    steps: session.steps.map((_, t) => stepData(session, t)),
    original: null,
    interventions: Object.values(session.keep).some((mask) => mask.data.includes(0)), // heads ablated throughout
  };
}

/** The whole decoding, shown at step `shown` (decoding/messages.Full). */
export function full(session, key, shown) {
  return {op: "full", key, shown, data: decoding(session)};
}

/** Its last step, for a page that holds the steps before it, shown at `shown` (messages.More). */
export function more(session, key, after, shown = session.steps.length) {
  const t = session.steps.length - 1;
  const out = tokens(session, session.tokens);
  return {
    op: "step", key, after, shown, step: stepData(session, t),
    out: {labels: out.labels[t], words: out.words[t], group: out.group[t], special: out.special[t]},
    cross_norms: t === 0 ? f32(session.crossNorms) : null,
  };
}

/** A step fewer, shown at `shown` (messages.Fewer). */
export function fewer(session, key, after, shown = session.steps.length) {
  return {op: "back", key, after, shown, steps: session.steps.length};
}

/** The decoding before a what-if (payload.Original): its tokens and each step's cross-attention, and the step (1-based)
 * the what-if changed, drawn beside the new one. */
export function original(session, steps, at) {
  return {out: tokens(session, steps.map((s) => s.token)), cross: steps.map((s) => q16(s.cross)), at};
}
