// Rank correlation: how far a head's attention orders the words as an attribution does.

/** Ranks from 1, ties given their mean rank. */
export function ranks(values) {
  const order = values.map((v, i) => i).sort((a, b) => values[a] - values[b]);
  const out = new Array(values.length);
  for (let i = 0; i < order.length;) {
    let j = i;
    while (j + 1 < order.length && values[order[j + 1]] === values[order[i]]) j++;
    for (let k = i; k <= j; k++) out[order[k]] = (i + j) / 2 + 1;
    i = j + 1;
  }
  return out;
}

/** Spearman's rank correlation of two equal-length lists; null where it is undefined (fewer than two values, or one
 * list constant). */
export function spearman(a, b) {
  const n = a.length;
  if (n < 2 || b.length !== n) return null;
  const ra = ranks(a), rb = ranks(b);
  const mean = (n + 1) / 2;
  let num = 0, da = 0, db = 0;
  for (let i = 0; i < n; i++) {
    num += (ra[i] - mean) * (rb[i] - mean);
    da += (ra[i] - mean) ** 2;
    db += (rb[i] - mean) ** 2;
  }
  return da > 0 && db > 0 ? num / Math.sqrt(da * db) : null;
}

/** Per head (L, H), the rank correlation of its attention at this step (`row`: units.stepRow's) with `values`, the
 * attribution of the same units; null where the head or the attribution has no order. */
export function agreement(row, values) {
  const {L, H, K, data} = row.stack;
  const grid = [];
  for (let l = 0; l < L; l++) {
    const cells = [];
    for (let h = 0; h < H; h++) cells.push(spearman(Array.from(data.subarray((l * H + h) * K, (l * H + h + 1) * K)), values));
    grid.push(cells);
  }
  return grid;
}
