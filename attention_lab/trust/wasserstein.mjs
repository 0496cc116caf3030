// Guerreiro et al. 2023's attention distances in the page, as attention_lab/trust/wasserstein.py defines them (see
// there): Wass-to-Unif, Wass-to-Data against the correct translations a page copy carries (reference.json:
// trust/reference.py page_file, read as the server reads reference-de-en.npz) and Wass-Combo. A mass is a source
// attention mass, one value per source token (n,).

import {floats32} from "../assets/decoding.mjs";

/** Wass-to-Unif of a mass (n,): its distance to uniform under the 0/1 cost, the total variation ½ Σ |p_i − 1/n|. */
export function toUnif(mass) {
  let total = 0;
  for (const p of mass) total += Math.abs(p - 1 / mass.length);
  return 0.5 * total;
}

/** The Wasserstein distance between two masses (n,) and (m,), token i of n at (i + ½)/n, under the cost |x − y|:
 * the integral over the line of |A(x) − B(x)|, A and B the two cumulative distributions (each cumulative weight over
 * its total), as scipy.stats.wasserstein_distance takes it between the points of both. */
export function massDistance(a, b) {
  const at = (i, n) => (i + 0.5) / n, n = a.length, m = b.length;
  const totalA = a.reduce((x, y) => x + y, 0), totalB = b.reduce((x, y) => x + y, 0);
  let i = 0, j = 0, upToA = 0, upToB = 0, found = 0;
  let x = Math.min(at(0, n), at(0, m));
  while (i < n || j < m) { // x: the point where the two cumulative distributions last changed
    while (i < n && at(i, n) <= x) upToA += a[i++];
    while (j < m && at(j, m) <= x) upToB += b[j++];
    if (i === n && j === m) break;
    const next = Math.min(i < n ? at(i, n) : Infinity, j < m ? at(j, m) : Infinity);
    found += Math.abs(upToA / totalA - upToB / totalB) * (next - x);
    x = next;
  }
  return found;
}

/** Wass-to-Data of a mass (n,): the mean of its `k` smallest distances to `references` (masses of any lengths); all
 * of them when there are fewer. */
export function toData(mass, references, k) {
  if (!references.length) throw new Error("Wass-to-Data needs at least one reference (got none)");
  const nearest = references.map((r) => massDistance(mass, r)).sort((x, y) => x - y).slice(0, k);
  return nearest.reduce((x, y) => x + y, 0) / nearest.length;
}

/** Wass-Combo: `data` below the rule's threshold on `unif`; from there on `unif`, mapped linearly from the rule's
 * range of Wass-to-Unif onto its range of Wass-to-Data. */
export function wassCombo(unif, data, rule) {
  if (unif < rule.threshold) return data;
  const [uLow, uHigh] = rule.unif, [dLow, dHigh] = rule.data;
  if (uHigh <= uLow) return dHigh; // every correct translation had the same Wass-to-Unif: nothing to map from
  return dLow + (unif - uLow) * (dHigh - dLow) / (uHigh - uLow);
}

/** The reference set of a copy's reference.json (its parsed JSON): {masses: per translation, per decoder layer a
 * Float64Array (S,) of the float32 values saved; lengths; rules: per layer {threshold, unif, data}}. */
export function readReference(saved) {
  const all = floats32(saved.mass), L = saved.layers, width = all.length / L, masses = [];
  let start = 0;
  for (const size of saved.sizes) {
    masses.push(Array.from({length: L}, (_, l) => Float64Array.from(all.subarray(l * width + start, l * width + start + size))));
    start += size;
  }
  return {masses, lengths: saved.lengths, rules: saved.rules};
}

/** Wass-to-Data per decoder layer of a translation of `length` tokens whose masses are `mass` (per layer), against
 * the `nearest` reference translations whose length is nearest it (ties in the file's order), `k` of them each. */
export function referenceToData(reference, mass, length, {k, nearest}) {
  const order = reference.lengths.map((n, i) => [Math.abs(n - length), i]).sort((x, y) => x[0] - y[0]);
  const picked = order.slice(0, nearest).map(([, i]) => reference.masses[i]); // a stable sort: ties keep their order
  return mass.map((m, layer) => toData(m, picked.map((r) => r[layer]), k));
}
