// two_models/words.py, align.py and messages.py in the page: a decoding's cross-attention in words (for each output
// word, how much it looked at each source word, for every head, each layer's mean and the mean of all), another
// model's rows moved onto this model's source words by the characters they share, the words two outputs have in
// common (difflib's matching blocks) and the Jensen–Shannon distance between two rows. The Two models tab's page
// maker (in_page.mjs) builds its message with them; tests/test_two_models_in_page.py holds it equal to the server's.

import {pyRound} from "../assets/format.mjs";
import {InputError} from "../page_copy/model.mjs";
import {wordGroups, wordLabel} from "../page_copy/pieces.mjs";

const SPACE = "␣"; // a lone word boundary's label (core/units.py SPACE)
const DECIMALS = 6;

/** The words of `ids` (core/units.py source_words): each word's positions, special tokens left out. */
function words(model, ids) {
  const pieces = ids.map((id) => model.piece(id)), special = ids.map((id) => model.special.has(id));
  const groups = wordGroups(pieces, special, model.config.character_level).filter((g) => !special[g[0]]);
  return {groups, labels: groups.map((g) => wordLabel(g.map((i) => pieces[i])))};
}

/** A decoding's cross-attention in words (words.py word_attention) for the LiveSession `s` of the copy `model`:
 * {source_words, output_words, token_words, heads: [L][H][W] rows over V, layers: [L][W], attention: [W]}. */
export function wordAttention(model, s) {
  const c = model.config, L = c.n_decoder_layers, H = c.n_heads, S = s.srcIds.length;
  const source = words(model, s.srcIds), output = words(model, s.tokens), V = source.groups.length;
  const heads = [];
  for (let l = 0; l < L; l++) {
    heads.push([...Array(H).keys()].map((h) => output.groups.map((pieces) => {
      const row = new Float64Array(V);
      for (const t of pieces) {
        const cross = s.steps[t].cross, at = (l * H + h) * S;
        source.groups.forEach((positions, v) => {
          for (const k of positions) row[v] += cross[at + k] / pieces.length;
        });
      }
      return renormalised(row);
    })));
  }
  const mean = (rows) => rows[0].map((row, w) => row.map((_, v) => rows.reduce((total, r) => total + r[w][v], 0) / rows.length));
  const layers = heads.map(mean);
  const tokenWords = s.tokens.map(() => -1);
  output.groups.forEach((pieces, w) => pieces.forEach((t) => (tokenWords[t] = w)));
  return {source_words: source.labels, output_words: output.labels, token_words: tokenWords, heads, layers,
    attention: mean(heads.flat())};
}

/** Each row over its sum (a row of zeros stays zeros). */
function renormalised(row) {
  const total = row.reduce((a, b) => a + b, 0);
  return Array.from(row, (x) => (total > 0 ? x / total : 0));
}

/** A word's characters as two models' source words are compared (words.py letters): NFKC, case-folded, no spaces. */
function letters(word) {
  const text = word === SPACE ? "" : casefold(word.normalize("NFKC"));
  return text.split(/\s+/u).join("");
}

/** Python's str.casefold for the text of a source: lower case, and the full foldings lower case keeps (ß → ss...). */
function casefold(text) {
  return text.toLowerCase().replace(/ß/g, "ss").replace(/ẞ/g, "ss").replace(/ς/g, "σ");
}

/** words.py character_map: how a weight on each of B's source words is split over A's ([Vb][Va]); InputError
 * (`different`, the server's words) if the two spell the source with different characters. */
export function characterMap(wordsB, wordsA, different) {
  if (wordsA.length === wordsB.length && wordsA.every((w, i) => w === wordsB[i])) {
    return wordsA.map((_, i) => wordsA.map((__, j) => (i === j ? 1 : 0)));
  }
  const spelledA = wordsA.map(letters), spelledB = wordsB.map(letters);
  if (spelledA.join("") !== spelledB.join("")) {
    throw new InputError(different);
  }
  const owner = spelledA.flatMap((w, i) => [...w].map(() => i)); // A's word of each character
  let at = 0;
  return spelledB.map((word) => {
    const row = wordsA.map(() => 0), n = [...word].length;
    if (n) for (let k = at; k < at + n; k++) row[owner[k]] += 1 / n;
    else if (owner.length) row[owner[Math.min(at, owner.length - 1)]] = 1;
    at += n;
    return row;
  });
}

const times = (rows, mapping) => rows.map((row) => mapping[0].map((_, j) => row.reduce((t, x, i) => t + x * mapping[i][j], 0)));

/** `found` with its rows over A's source words (words.py on_words through characterMap). */
export function linedUp(a, found, different) {
  const same = a.source_words.length === found.source_words.length
    && a.source_words.every((word, i) => word === found.source_words[i]);
  if (same) return found; // one to one
  const mapping = characterMap(found.source_words, a.source_words, different);
  return {...found, source_words: a.source_words, attention: times(found.attention, mapping),
    layers: found.layers.map((rows) => times(rows, mapping)), heads: found.heads.map((l) => l.map((rows) => times(rows, mapping)))};
}

/** align.py shared_words: (index in A, index in B) of each word the two outputs share, in order: difflib's
 * SequenceMatcher(autojunk=False).get_matching_blocks, pair by pair. */
export function sharedWords(a, b) {
  const where = new Map();
  b.forEach((word, j) => (where.has(word) ? where.get(word).push(j) : where.set(word, [j])));
  const longest = (alo, ahi, blo, bhi) => { // find_longest_match, with no junk
    let best = [alo, blo, 0], lengths = new Map();
    for (let i = alo; i < ahi; i++) {
      const next = new Map();
      for (const j of where.get(a[i]) ?? []) {
        if (j < blo) continue;
        if (j >= bhi) break;
        const k = (lengths.get(j - 1) ?? 0) + 1;
        next.set(j, k);
        if (k > best[2]) best = [i - k + 1, j - k + 1, k];
      }
      lengths = next;
    }
    return best;
  };
  const blocks = [], queue = [[0, a.length, 0, b.length]];
  while (queue.length) {
    const [alo, ahi, blo, bhi] = queue.pop(), [i, j, k] = longest(alo, ahi, blo, bhi);
    if (!k) continue;
    blocks.push([i, j, k]);
    if (alo < i && blo < j) queue.push([alo, i, blo, j]);
    if (i + k < ahi && j + k < bhi) queue.push([i + k, ahi, j + k, bhi]);
  }
  blocks.sort((x, y) => x[0] - y[0] || x[1] - y[1] || x[2] - y[2]);
  return blocks.flatMap(([i, j, k]) => [...Array(k).keys()].map((n) => [i + n, j + n]));
}

/** align.py distance: the Jensen–Shannon distance (base 2) between two rows over the same source words (scipy's
 * jensenshannon: each row normalised first). */
export function distance(rowA, rowB) {
  const sum = (row) => row.reduce((t, x) => t + x, 0), [sa, sb] = [sum(rowA), sum(rowB)];
  if (!sa || !sb) return Number(sa !== sb);
  const p = rowA.map((x) => x / sa), q = rowB.map((x) => x / sb);
  const relEntr = (x, y) => (x > 0 && y > 0 ? x * Math.log(x / y) : x === 0 && y >= 0 ? 0 : Infinity);
  let js = 0;
  p.forEach((x, i) => {
    const m = (x + q[i]) / 2;
    js += relEntr(x, m) + relEntr(q[i], m);
  });
  const found = Math.sqrt(js / Math.log(2) / 2);
  return Number.isNaN(found) ? 0 : found;
}

/** messages.py shared_of: the words two outputs share, with the distance between the two rows at each. */
export function sharedOf(a, b) {
  return sharedWords(a.output_words, b.output_words).map(([i, j]) =>
    ({word: a.output_words[i], a: i, b: j, distance: pyRound(distance(a.attention[i], b.attention[j]), DECIMALS)}));
}
