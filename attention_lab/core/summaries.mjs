// core/summaries.py in the page: every head summarised over a decoding the page holds (a LiveSession,
// page_copy/model.mjs), how spread its attention is, how much of it goes to special tokens and, where a gold alignment
// is known, how often a cross head's largest weight is on the right source token. The Heads tab's summary
// (heads/in_page.mjs) and the Training tab's film (training/in_page.mjs) read it.

import {pyRound} from "../assets/format.mjs";

const entropy = (row) => row.reduce((total, p) => (p > 0 ? total - p * Math.log(p) : total), 0);
const mean = (values) => values.reduce((a, b) => a + b, 0) / values.length;

/** core/summaries.py head_summaries over the LiveSession `s` of the source `ids`: {kind: [layer][head] ->
 * {entropy, special, alignment}} (null where a head has no value). */
export function headSummaries(model, ids, s) {
  const c = model.config, H = c.n_heads, S = ids.length, T = s.steps.length, special = model.special;
  const inputs = [c.bos_id, ...s.steps.slice(0, -1).map((step) => step.token)]; // decoder self-attention's keys
  const gold = goldAlignment(c.gold_alignment, S);
  const cell = (ent, spec, alignment = null) => ({entropy: number6(ent), special: number6(spec), alignment});
  const rowsOf = (flat, at, n) => flat.subarray(at * n, (at + 1) * n);
  const out = {encoder: [], decoder_self: [], cross: []};
  for (let l = 0; l < c.n_encoder_layers; l++) {
    out.encoder.push([...Array(H).keys()].map((h) => {
      const rows = [...Array(S).keys()].map((q) => rowsOf(s.encoder, (l * H + h) * S + q, S));
      return cell(mean(rows.map(entropy)), mean(rows.map((r) => sumAt(r, ids, special))));
    }));
  }
  for (let l = 0; l < c.n_decoder_layers; l++) {
    out.decoder_self.push([...Array(H).keys()].map((h) => {
      const rows = s.steps.map((step, t) => rowsOf(step.self, l * H + h, t + 1));
      return cell(mean(rows.map(entropy)), mean(rows.map((r) => sumAt(r, inputs, special))));
    }));
    out.cross.push([...Array(H).keys()].map((h) => {
      const rows = s.steps.map((step) => rowsOf(step.cross, l * H + h, S));
      const picks = rows.map(argmax);
      const alignment = gold.length ? mean(gold.map(([i, j]) => (i < T && picks[i] === j ? 1 : 0))) : null;
      return cell(mean(rows.map(entropy)), mean(rows.map((r) => sumAt(r, ids, special))), alignment);
    }));
  }
  return out;
}

/** The weight of `row` on the positions whose ids (`ids`) are special. */
function sumAt(row, ids, special) {
  let total = 0;
  for (let k = 0; k < row.length; k++) if (special.has(ids[k])) total += row[k];
  return total;
}

function argmax(row) {
  let best = 0;
  for (let k = 1; k < row.length; k++) if (row[k] > row[best]) best = k;
  return best;
}

const number6 = (v) => (Number.isFinite(v) ? pyRound(v, 6) : null); // core/summaries.py _number

/** models/alignments.py gold_alignment: (step, source position) pairs, 0-based; none when no alignment is known. */
function goldAlignment(alignment, S) {
  return alignment === "reversal" ? [...Array(S - 1).keys()].map((i) => [i, S - 2 - i]) : [];
}
