// What the unit tests of the page's modules share: a decoding payload made up in JavaScript, as
// attention_lab/core/payload.py lays one out (weights as base64 of 16-bit integers, norms of 32-bit floats).

export function q16(values) {
  const out = new Uint16Array(values.length);
  values.forEach((v, i) => { out[i] = Math.round(Math.min(1, Math.max(0, v)) * 65535); });
  return Buffer.from(out.buffer).toString("base64");
}

export function f32(values) {
  return Buffer.from(new Float32Array(values).buffer).toString("base64");
}

/** A row of `n` weights that sums to 1, peaked at `at`. */
export function peaked(n, at) {
  const row = new Array(n).fill(0.5 / Math.max(1, n - 1));
  row[at] = n > 1 ? 0.5 : 1;
  return row;
}

/** A decoding of `S` source tokens (the last </s>), `T` steps, L layers (both stacks) and H heads: every head of step
 * t looks at source position (S - 2 - t), as the reversal model does. */
export function payload({S = 4, T = 3, L = 2, H = 2} = {}) {
  const seq = (labels, special) => ({labels, words: labels, group: labels.map((_, i) => i), special});
  const src = seq([...Array(S - 1).keys()].map((i) => `s${i}`).concat(["</s>"]), [...Array(S - 1).fill(false), true]);
  const out = seq([...Array(T).keys()].map((t) => `o${t}`), Array(T).fill(false));
  const encoder = [];
  for (let lh = 0; lh < L * H; lh++) for (let q = 0; q < S; q++) encoder.push(...peaked(S, q));
  const steps = [...Array(T).keys()].map((t) => {
    const cross = [], self = [];
    for (let lh = 0; lh < L * H; lh++) {
      cross.push(...peaked(S, Math.max(0, S - 2 - t)));
      self.push(...peaked(t + 1, t));
    }
    const selfRollout = [];
    for (let l = 0; l < L; l++) selfRollout.push(...peaked(t + 1, t));
    return {token: 10 + t, label: `o${t}`, forced: false, prob: 0.9, top: [[`o${t}`, 10 + t, 0.9], ["x", 99, 0.05]],
      cross: q16(cross), self: q16(self), self_norms: f32(Array(L * H).fill(1)), self_rollout: q16(selfRollout)};
  });
  const rollout = [];
  for (let l = 0; l < L; l++) for (let q = 0; q < S; q++) rollout.push(...peaked(S, q));
  return {model: "made-up", layers: [L, L], heads: H, character_level: false, bos: "<s>", src, out,
    encoder: q16(encoder), encoder_norms: f32(Array(L * H * S).fill(1)), encoder_rollout: q16(rollout),
    cross_norms: f32(Array(L * H * S).fill(1)), steps, original: null, interventions: false};
}

/** Names of the kinds and the looks, as the server sends them once (attention_lab.core.looks.Names): made up
 * here, so that the modules are seen to draw whatever names they are given. */
export const NAMES = {
  op: "names",
  kinds: {
    cross: {title: "Cross (test)", axes: ["written", "source"]},
    encoder: {title: "Encoder (test)", axes: ["from", "to"]},
    decoder_self: {title: "Decoder (test)", axes: ["written", "input"]},
  },
  order: ["cross", "encoder", "decoder_self"],
  readings: {weights: "Weights (test)", value: "Value (test)", rollout: "Rollout (test)"},
  scales: {linear: "lin (test)", log: "log (test)", row: "row (test)"},
  focus_mean: "Mean (test)",
};

/** A decoding's key, as the server writes it. */
export function key(serial, version) {
  return {serial, version};
}
