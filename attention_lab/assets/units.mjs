// The weights a view draws, from a Decoding: in words or pieces, special tokens hidden or not, and read as the
// attention weights, value-weighted or rolled out. What is decided in Python travels with the data (which pieces
// form a word, every label, the value norms and rollouts); here the page only applies it: a word's row is the mean
// of its pieces' rows and its column the sum of theirs; hidden special tokens are dropped and each row renormalised;
// value-weighting multiplies by the norms and takes each row's shares; cross-attention's rollout multiplies by the
// encoder's. tests/test_page_modules.py holds each equal to attention_lab.core.units.in_units and
// transformer.readings on the same numbers.

import {LOG_FLOOR} from "./style.mjs";

/** The first `n` tokens of a sequence as units: words (pieces of one word merged) or pieces. */
export function units(seq, n, words) {
  const out = {labels: [], groups: [], special: []};
  for (let i = 0; i < n; i++) {
    const joins = words && i > 0 && seq.group[i] === seq.group[i - 1] && seq.group[i] >= 0;
    if (joins) {
      out.groups[out.groups.length - 1].push(i);
      out.labels[out.labels.length - 1] = seq.words[i];
    } else {
      out.groups.push([i]);
      out.labels.push(words ? seq.words[i] : seq.labels[i]);
      out.special.push(seq.special[i]);
    }
  }
  return out;
}

function kept(u) {
  const keep = [];
  u.special.forEach((s, i) => { if (!s) keep.push(i); });
  return keep;
}

/** Piece weights (L, H, Q, K) in units: a row per row unit (the mean of its pieces' rows), a column per column unit
 * (the sum of its pieces' columns); with `hide`, special units dropped and every row renormalised. */
export function inUnits(stack, rows, cols, hide) {
  const {L, H, Q, K, data} = stack;
  const rowIdx = hide ? kept(rows) : rows.groups.map((_, i) => i);
  const colIdx = hide ? kept(cols) : cols.groups.map((_, i) => i);
  const R = rowIdx.length, C = colIdx.length;
  const out = new Float32Array(L * H * R * C);
  for (let lh = 0; lh < L * H; lh++) {
    for (let r = 0; r < R; r++) {
      const group = rows.groups[rowIdx[r]];
      const base = (lh * R + r) * C;
      let total = 0;
      for (let c = 0; c < C; c++) {
        let sum = 0;
        for (const q of group) for (const k of cols.groups[colIdx[c]]) sum += data[(lh * Q + q) * K + k];
        out[base + c] = sum / group.length;
        total += out[base + c];
      }
      if (hide) for (let c = 0; c < C; c++) out[base + c] = total > 0 ? out[base + c] / total : 0;
    }
  }
  return {L, H, Q: R, K: C, data: out, rows: rowIdx, cols: colIdx};
}

/** Weights times the norms of their keys (norms: (L, H, K)), as each row's shares (Kobayashi et al. 2020). */
export function valueWeighted(stack, norms) {
  const {L, H, Q, K, data} = stack;
  const out = new Float32Array(data.length);
  for (let lh = 0; lh < L * H; lh++) {
    for (let q = 0; q < Q; q++) {
      let total = 0;
      const base = (lh * Q + q) * K;
      for (let k = 0; k < K; k++) total += (out[base + k] = data[base + k] * norms[lh * K + k]);
      for (let k = 0; k < K; k++) out[base + k] = total > 0 ? out[base + k] / total : 0;
    }
  }
  return {...stack, data: out};
}

/** Each row times a (K, K) matrix: cross-attention carried through the encoder's rollout. */
export function through(stack, matrix) {
  const {L, H, Q, K, data} = stack;
  const out = new Float32Array(data.length);
  for (let row = 0; row < L * H * Q; row++) {
    for (let j = 0; j < K; j++) {
      let sum = 0;
      for (let k = 0; k < K; k++) sum += data[row * K + k] * matrix[k * K + j];
      out[row * K + j] = sum;
    }
  }
  return {...stack, data: out};
}

/** Piece-level weights of `kind` at step `shown`, in the `reading`. */
export function read(decoding, kind, shown, reading) {
  const pieces = decoding.pieces(kind, shown);
  if (reading === "value" && pieces.norms) return valueWeighted(pieces, pieces.norms);
  if (reading === "rollout") {
    if (kind === "cross") {
      const S = decoding.S, last = decoding.encoderRollout.subarray((decoding.Le - 1) * S * S, decoding.Le * S * S);
      return through(pieces, last);
    }
    return decoding.rollout(kind, shown);
  }
  return pieces;
}

/** (L, H, Q, K) in the look's units and reading, its row and column units, the row of step `shown`, and `key`,
 * which names them: the same key, the same weights (what is drawn from them can be remembered by it). */
export function weights(decoding, kind, shown, look) {
  if (kind === "encoder") shown = 0; // the source's attention does not change as the output grows
  const key = [kind, shown, look.words, look.hideSpecials, look.reading].join("|");
  return decoding.remembered(`weights:${kind}`, key, () => ({...computeWeights(decoding, kind, shown, look), key}));
}

function computeWeights(decoding, kind, shown, look) {
  let rows, cols, rowPiece = null;
  if (kind === "encoder") {
    rows = cols = units(decoding.src, decoding.S, look.words);
  } else {
    rows = units(decoding.out, shown, look.words);
    cols = kind === "cross" ? units(decoding.src, decoding.S, look.words) : units(decoding.inputs(), shown, look.words);
    rowPiece = shown - 1;
  }
  const merged = inUnits(read(decoding, kind, shown, look.reading), rows, cols, look.hideSpecials);
  let current = rows.groups.findIndex((g) => g.includes(rowPiece));
  current = current < 0 ? null : current;
  if (look.hideSpecials) current = merged.rows.includes(current) ? merged.rows.indexOf(current) : null;
  const pick = (u, idx) => ({labels: idx.map((i) => u.labels[i]), groups: idx.map((i) => u.groups[i])});
  return {stack: merged, rows: pick(rows, merged.rows), cols: pick(cols, merged.cols), current};
}

/** The focused head's (Q, K), or the mean of all heads, and its name; a rollout (L, 1, Q, K) shows one layer. */
export function head(stack, focus, rolled) {
  const {L, H, Q, K, data} = stack;
  if (rolled) {
    const layer = focus ? Math.min(focus[0], L - 1) : L - 1;
    return {z: data.subarray(layer * Q * K, (layer + 1) * Q * K), Q, K, name: `rollout through layer ${layer + 1}`};
  }
  if (focus && focus[0] < L && focus[1] < H) {
    const lh = focus[0] * H + focus[1];
    return {z: data.subarray(lh * Q * K, (lh + 1) * Q * K), Q, K, name: `layer ${focus[0] + 1}, head ${focus[1] + 1}`};
  }
  const mean = new Float32Array(Q * K);
  for (let lh = 0; lh < L * H; lh++) for (let i = 0; i < Q * K; i++) mean[i] += data[lh * Q * K + i] / (L * H);
  return {z: mean, Q, K, name: "mean of all heads"};
}

/** Every head's row of `kind` at step `shown` (its own piece row: a word's other pieces are other steps), its
 * columns in the look's units and reading, specials dropped and renormalised with `hideSpecials`: (L, H, 1, C). */
export function stepRow(decoding, kind, shown, look) {
  const cols = kind === "cross" ? units(decoding.src, decoding.S, look.words) : units(decoding.inputs(), shown, look.words);
  const one = {labels: ["·"], groups: [[0]], special: [false]};
  const all = read(decoding, kind, shown, look.reading);
  const {L, H, Q, K} = all, row = new Float32Array(L * H * K);
  for (let lh = 0; lh < L * H; lh++) row.set(all.data.subarray((lh * Q + shown - 1) * K, (lh * Q + shown) * K), lh * K);
  const merged = inUnits({...all, Q: 1, data: row}, one, cols, look.hideSpecials);
  return {stack: merged, labels: merged.cols.map((c) => cols.labels[c]), groups: merged.cols.map((c) => cols.groups[c])};
}

/** Weights in the colour scale: linear, log (floored at LOG_FLOOR) or each row over its maximum. */
export function scaled(z, Q, K, scale) {
  const out = new Float32Array(Q * K);
  for (let q = 0; q < Q; q++) {
    let top = 0;
    if (scale === "row") for (let k = 0; k < K; k++) top = Math.max(top, z[q * K + k]);
    for (let k = 0; k < K; k++) {
      const w = z[q * K + k];
      out[q * K + k] = scale === "log" ? Math.log10(Math.max(w, LOG_FLOOR)) : scale === "row" ? (top > 0 ? w / top : 0) : w;
    }
  }
  return out;
}

/** A scaled weight's colour as a share of the scale, 0 to 1 (the words' shading). */
export function unit(value, scale) {
  return scale === "log" ? (value - Math.log10(LOG_FLOOR)) / -Math.log10(LOG_FLOOR) : value;
}
