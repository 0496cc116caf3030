// A live decoding as the page's messages (attention_lab/decoding/messages.py, in the checked-in schema
// attention_lab/assets/messages.schema.json): the whole decoding (payload.Decoding), a step more, a step fewer. The
// app's own modules draw them, as they draw the server's. Weights and rollout shares travel as 16-bit integers and
// value norms as 32-bit floats, base64 of their little-endian bytes, as payload.py sends them.

import {labelledPieces} from "./pieces.mjs";

const SCALE = 65535;

function base64(bytes) {
  let text = "";
  for (let i = 0; i < bytes.length; i += 0x8000) text += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(text);
}

export function q16(values) {
  const out = new Uint16Array(values.length);
  for (let i = 0; i < values.length; i++) out[i] = Math.round(Math.min(1, Math.max(0, values[i])) * SCALE);
  return base64(new Uint8Array(littleEndian(out).buffer));
}

export function f32(values) {
  return base64(new Uint8Array(littleEndian(Float32Array.from(values)).buffer));
}

const LITTLE = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;
function littleEndian(array) {
  if (LITTLE) return array;
  const copy = new array.constructor(array.length), view = new DataView(copy.buffer);
  const set = array instanceof Uint16Array ? "setUint16" : "setFloat32";
  array.forEach((v, i) => view[set](i * array.BYTES_PER_ELEMENT, v, true));
  return copy;
}

const round6 = (p) => Math.round(p * 1e6) / 1e6;

/** The decoder self-attention's rollout row of step t (Ld, t + 1) from the rows of the steps before it (`rows`:
 * per step, per layer, its row): transformer.readings.rollout, a row at a time (the attention is causal). */
export function rolloutRow(step, rows, Ld, H) {
  const t = rows.length, n = t + 1;
  const row = [];
  for (let l = 0; l < Ld; l++) {
    const a = new Float64Array(n);
    for (let h = 0; h < H; h++) for (let j = 0; j < n; j++) a[j] += step.self[(l * H + h) * n + j] / H;
    for (let j = 0; j < n; j++) a[j] = 0.5 * a[j] + (j === t ? 0.5 : 0);
    const sum = a.reduce((x, y) => x + y, 0);
    for (let j = 0; j < n; j++) a[j] /= sum;
    if (l === 0) row.push(a);
    else {
      const rolled = new Float64Array(n);
      for (let j = 0; j < n; j++) {
        const below = j === t ? row[l - 1] : rows[j][l - 1];
        for (let k = 0; k < below.length; k++) rolled[k] += a[j] * below[k];
      }
      row.push(rolled);
    }
  }
  return row;
}

/** Per step of `session`, its rollout rows (kept with the session: a step adds one, Back drops one). */
function rollouts(session) {
  const c = session.model.config;
  session.rolled ??= [];
  session.rolled.length = Math.min(session.rolled.length, session.steps.length);
  while (session.rolled.length < session.steps.length) {
    session.rolled.push(rolloutRow(session.steps[session.rolled.length], session.rolled, c.n_decoder_layers, c.n_heads));
  }
  return session.rolled;
}

function stepData(session, t) {
  const m = session.model, step = session.steps[t];
  const row = rollouts(session)[t];
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
  };
}

/** The whole decoding, shown at step `shown` (decoding/messages.Full). */
export function full(session, key, shown) {
  return {op: "full", key, shown, data: decoding(session)};
}

/** Its last step, for a page that holds the steps before it (messages.More). */
export function more(session, key, after) {
  const t = session.steps.length - 1;
  const out = tokens(session, session.tokens);
  return {
    op: "step", key, after, shown: t + 1, step: stepData(session, t),
    out: {labels: out.labels[t], words: out.words[t], group: out.group[t], special: out.special[t]},
    cross_norms: t === 0 ? f32(session.crossNorms) : null,
  };
}

/** A step fewer (messages.Fewer). */
export function fewer(session, key, after) {
  const n = session.steps.length;
  return {op: "back", key, after, shown: n, steps: n};
}

/** The decoding before a what-if (payload.Original): its tokens and each step's cross-attention, and the step (1-based)
 * the what-if changed, drawn beside the new one. */
export function original(session, steps, at) {
  return {out: tokens(session, steps.map((s) => s.token)), cross: steps.map((s) => q16(s.cross)), at};
}
