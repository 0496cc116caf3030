// Two models side by side, as numbers and words (no page: Node tests, tests/js/two_models.test.mjs): each side's rows
// unpacked from the tab's message (attention_lab/two_models/messages.py: TwoModelsMessage), the word each side shows,
// how one side follows the other, and the summary line.
//
// The rule one side follows the other by: where the outputs share the word shown (difflib's matching blocks, the
// message's `shared`), the other side shows that word; elsewhere it shows the word it writes in the same place, as
// many words after the last word the two share before it, if it writes one there before the next shared word;
// otherwise none.

import {weights16} from "../assets/decoding.mjs";
import {focusLabel} from "../assets/style.mjs";
import {madeFrom} from "../assets/slow.mjs";

export const A = 0, B = 1;
export const DISTANCE = "Jensen–Shannon distance (base 2: 0 for the same weights, 1 for no source word in common)";
export const RULE = "Where the outputs share the word shown, both show it; elsewhere the other side shows the word it "
  + "writes in the same place (as many words after the last word they share), or none if it writes none there.";

/** Whether `message` (the server's Two models message) was made from the page's decoding `d` (the run `key`), as it
 * stands: the tab shows whole outputs, so every token must be the same. */
export function pairUsable(message, d, key) {
  return !!message && message.op === "two_models" && madeFrom(message, d, key);
}

/** A side's rows, read once: {rows (Float32Array), L, H, W, V}. */
export function unpacked(side, V) {
  return {rows: weights16(side.rows), L: side.layers, H: side.heads, W: side.words.length, V};
}

/** The block of rows for `focus`: null for the mean of every head, [layer] for a layer's mean, [layer, head] a head
 * (0-based). */
export function block(focus, L, H) {
  if (!focus) return 0;
  const [layer, head] = focus;
  if (layer < 0 || layer >= L) return 0;
  if (head === undefined || head === null) return 1 + layer;
  return head >= 0 && head < H ? 1 + L + layer * H + head : 0;
}

/** Output word `w`'s row over the source words (V numbers) for `focus` (see block). */
export function rowOf(u, w, focus) {
  const at = (block(focus, u.L, u.H) * u.W + w) * u.V;
  return Array.from(u.rows.subarray(at, at + u.V));
}

/** What a focus is called: the mean, a layer's mean, or a head. */
export function focusName(focus) {
  if (!focus) return "mean of all heads";
  return focus[1] === undefined || focus[1] === null ? `Layer ${focus[0] + 1} · mean` : focusLabel(focus[0], focus[1]);
}

/** The focus choices of a model with L layers and H heads: [value, text], the value "" for the mean, "l" for a
 * layer's mean, "l h" for a head (0-based). */
export function headChoices(L, H) {
  const out = [["", focusName(null)]];
  for (let l = 0; l < L; l++) {
    out.push([`${l}`, focusName([l])]);
    for (let h = 0; h < H; h++) out.push([`${l} ${h}`, focusName([l, h])]);
  }
  return out;
}

/** A focus choice's value (see headChoices) as a focus. */
export function focusOfChoice(value) {
  if (!value) return null;
  const [layer, head] = String(value).split(" ").map(Number);
  return head === undefined ? [layer] : [layer, head];
}

/** The choice of a focus. */
export function choiceOf(focus) {
  if (!focus) return "";
  return focus[1] === undefined || focus[1] === null ? `${focus[0]}` : `${focus[0]} ${focus[1]}`;
}

/** Model A's word written at step `shown` of the page (1-based; 0: none yet), or null (none, or a special token). */
export function wordAtStep(side, shown) {
  if (!shown || shown > side.token_words.length) return null;
  const w = side.token_words[shown - 1];
  return w >= 0 ? w : null;
}

/** The page's step that shows model A's word `w`: the step that wrote its last piece. */
export function stepOfWord(side, w) {
  const last = side.token_words.lastIndexOf(w);
  return last < 0 ? null : last + 1;
}

/** The word the other side shows when side `from` shows word `w`: {word (an index, or null), shared (whether the
 * outputs share it)}, by the rule above. */
export function follow(message, from, w) {
  if (w === null || w === undefined) return {word: null, shared: false};
  const mine = from === A ? "a" : "b", theirs = from === A ? "b" : "a";
  const n = message.models[1 - from].words.length;
  let before = null, after = null;
  for (const pair of message.shared) {
    if (pair[mine] === w) return {word: pair[theirs], shared: true};
    if (pair[mine] < w) before = pair;
    else if (after === null) after = pair;
  }
  const word = (before ? before[theirs] : -1) + (w - (before ? before[mine] : -1));
  const end = after ? after[theirs] : n;
  return {word: word < end ? word : null, shared: false};
}

/** Where the outputs first differ: {at (a word index), a, b (the words there, null past an end)}, or null when
 * they are the same word for word. */
export function firstDifference(message) {
  const [a, b] = message.models.map((side) => side.words);
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    if (a[i] !== b[i]) return {at: i, a: i < a.length ? a[i] : null, b: i < b.length ? b[i] : null};
  }
  return null;
}

/** The summary line: where the outputs first differ, and the distance at each shared word. */
export function pairSummary(message) {
  const [a, b] = message.models;
  const diff = firstDifference(message);
  const spelled = (word) => (word === null ? "nothing more" : `“${word}”`);
  const first = !diff ? `The two outputs are the same, word for word (${a.words.length} words).`
    : `The outputs first differ at word ${diff.at + 1}: A writes ${spelled(diff.a)}, B ${spelled(diff.b)}.`;
  if (!message.shared.length) return `${first} They share no word, so no distance is measured.`;
  const measured = message.shared.filter((pair) => Number.isFinite(pair.distance)); // null: none could be measured
  const each = message.shared.map((pair) => `${pair.word} ${Number.isFinite(pair.distance) ? pair.distance.toFixed(2) : "–"}`)
    .join(" · ");
  const mean = measured.reduce((total, pair) => total + pair.distance, 0) / Math.max(1, measured.length);
  return `${first} They share ${message.shared.length} of ${a.words.length} and ${b.words.length} words. `
    + `${DISTANCE} between the two models' mean cross-attention at each: ${each} (mean ${mean.toFixed(2)}).`;
}
