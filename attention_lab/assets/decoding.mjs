// A decoding as the page holds it, read from what attention_lab/core/payload.py sends: every kind, layer and
// head once per Run, a step at a time after. Weights and rollout shares come as 16-bit integers (w · 65535), value
// norms as 32-bit floats, each as base64 of its little-endian bytes.
//
// Shapes: a stack is {L, H, Q, K, data: Float32Array} read as data[((l * H + h) * Q + q) * K + k].

const SCALE = 65535;

/** The bytes of a base64 string. */
export function base64Bytes(b64) {
  const text = atob(b64);
  const out = new Uint8Array(text.length);
  for (let i = 0; i < text.length; i++) out[i] = text.charCodeAt(i);
  return out;
}

/** Bytes as base64 (what base64Bytes reads back). */
export function bytesBase64(bytes) {
  let text = "";
  for (let i = 0; i < bytes.length; i += 0x8000) text += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(text);
}

export function weights16(b64) {
  const raw = base64Bytes(b64);
  const out = new Float32Array(raw.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = (raw[2 * i] | (raw[2 * i + 1] << 8)) / SCALE;
  return out;
}

export function floats32(b64) {
  const raw = base64Bytes(b64);
  const view = new DataView(raw.buffer);
  const out = new Float32Array(raw.length / 4);
  for (let i = 0; i < out.length; i++) out[i] = view.getFloat32(4 * i, true);
  return out;
}

function decodeStep(step) {
  return {...step, cross: weights16(step.cross), self: weights16(step.self), selfNorms: step.self_norms ? floats32(step.self_norms) : null,
    selfRollout: weights16(step.self_rollout)};
}

const SEQUENCE = ["labels", "words", "group", "special"];

export class Decoding {
  /** `data` is payload.full's; steps come and go with the messages. */
  constructor(data) {
    this.model = data.model;
    [this.Le, this.Ld] = data.layers;
    this.H = data.heads;
    this.characterLevel = data.character_level;
    this.bos = data.bos;
    this.src = data.src;
    this.out = Object.fromEntries(SEQUENCE.map((name) => [name, [...data.out[name]]]));
    this.S = data.src.labels.length;
    this.encoder = weights16(data.encoder);
    this.encoderNorms = data.encoder_norms ? floats32(data.encoder_norms) : null; // none: weights alone were given
    this.encoderRollout = weights16(data.encoder_rollout);
    this.crossNorms = data.cross_norms ? floats32(data.cross_norms) : null;
    this.steps = data.steps.map(decodeStep);
    this.revision = 0; // bumped by every change of the steps: what was worked out for an older one is stale
    this.memo = new Map();
    this.interventions = Boolean(data.interventions); // heads ablated or edited (an edit is the server's alone)
    this.original = null;
    if (data.original) {
      const o = data.original;
      this.original = {out: o.out, at: o.at, steps: o.cross.map((c) => ({cross: weights16(c)}))};
    }
  }

  addStep(delta) {
    this.revision++;
    this.steps.push(decodeStep(delta.step));
    for (const name of SEQUENCE) this.out[name].push(delta.out[name]);
    if (delta.cross_norms) this.crossNorms = floats32(delta.cross_norms);
  }

  keep(n) {
    this.revision++;
    this.steps.length = n;
    for (const name of SEQUENCE) this.out[name].length = n;
  }

  /** What `make()` gives, worked out once per `key` (the last one kept for each `name`): another focus or colour
   * scale redraws from the weights it already has. */
  remembered(name, key, make) {
    const known = this.memo.get(name);
    if (known && known.key === key && known.revision === this.revision) return known.value;
    const value = make();
    this.memo.set(name, {key, revision: this.revision, value});
    return value;
  }

  /** The decoder's inputs: the start token, then every output but the last (a special token, a word alone). */
  inputs() {
    return {labels: [this.bos, ...this.out.labels], words: [this.bos, ...this.out.words],
      group: [-1, ...this.out.group], special: [true, ...this.out.special]};
  }

  /** Piece-level weights of `kind` at step `shown` (1-based), (L, H, Q, K), and the norms of its keys (L, H, K). */
  pieces(kind, shown) {
    const {H, S} = this;
    if (kind === "encoder") return {L: this.Le, H, Q: S, K: S, data: this.encoder, norms: this.encoderNorms};
    const L = this.Ld;
    if (kind === "cross") {
      const data = new Float32Array(L * H * shown * S);
      for (let q = 0; q < shown; q++) {
        const row = this.steps[q].cross;
        for (let lh = 0; lh < L * H; lh++) data.set(row.subarray(lh * S, (lh + 1) * S), (lh * shown + q) * S);
      }
      return {L, H, Q: shown, K: S, data, norms: this.crossNorms};
    }
    const data = new Float32Array(L * H * shown * shown);
    const known = shown > 0 && this.steps[0].selfNorms !== null;
    const norms = known ? new Float32Array(L * H * shown) : null;
    for (let q = 0; q < shown; q++) {
      const step = this.steps[q];
      for (let lh = 0; lh < L * H; lh++) {
        data.set(step.self.subarray(lh * (q + 1), (lh + 1) * (q + 1)), (lh * shown + q) * shown);
        if (known) norms[lh * shown + q] = step.selfNorms[lh];
      }
    }
    return {L, H, Q: shown, K: shown, data, norms};
  }

  /** Rollout of a self-attention kind through each layer, (L, 1, Q, K). */
  rollout(kind, shown) {
    if (kind === "encoder") return {L: this.Le, H: 1, Q: this.S, K: this.S, data: this.encoderRollout};
    const L = this.Ld;
    const data = new Float32Array(L * shown * shown);
    for (let q = 0; q < shown; q++) {
      const row = this.steps[q].selfRollout; // (L, q + 1)
      for (let l = 0; l < L; l++) data.set(row.subarray(l * (q + 1), (l + 1) * (q + 1)), (l * shown + q) * shown);
    }
    return {L, H: 1, Q: shown, K: shown, data};
  }

  /** The decoding before a what-if, ablation or edit, as a Decoding of its own (cross-attention only). */
  before() {
    if (!this.original) return null;
    const before = Object.create(Decoding.prototype);
    return Object.assign(before, this, {out: this.original.out, steps: this.original.steps, memo: new Map()});
  }
}
