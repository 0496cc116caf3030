import assert from "node:assert/strict";
import {test} from "node:test";

import {A, B, block, choiceOf, firstDifference, headChoices, focusOfChoice, follow, pairUsable, rowOf, stepOfWord,
  pairSummary, unpacked, wordAtStep} from "../../attention_lab/two_models/pair.mjs";
import {band, pairFigure, shownWords} from "../../attention_lab/two_models/two_models.mjs";
import {valid} from "./messages.mjs";

/** Rows as the server packs them (attention_lab/two_models/messages.py): uint16 round(w · 65535), little-endian. */
function packed(values) {
  const view = new DataView(new ArrayBuffer(2 * values.length));
  values.forEach((v, i) => view.setUint16(2 * i, Math.round(v * 65535), true));
  return Buffer.from(view.buffer).toString("base64");
}

/** A side with L layers, H heads, its words and token_words; row (block, w) over V source words is made up so each
 * is told apart: its first entry is (block + 1) / 10 + w / 100, the rest share what is left equally. */
function side(model, words, tokenWords, L, H, V) {
  const values = [];
  for (let k = 0; k < 1 + L + L * H; k++) {
    for (let w = 0; w < words.length; w++) {
      const first = (k + 1) / 10 + w / 100;
      values.push(first, ...Array(V - 1).fill((1 - first) / (V - 1)));
    }
  }
  return {model, tokens: [...words, "</s>"], words, token_words: tokenWords, layers: L, heads: H, rows: packed(values)};
}

const SOURCE = ["Das", "alte", "Haus", "hier", "."]; // five: not as many as either output's words
// A: "the old house ." (house in two pieces); B: "the very old house ." (one word inserted)
const MESSAGE = valid({op: "two_models", key: {serial: 3, version: 1}, tokens: [5, 6, 7, 8, 9, 2],
  source_words: SOURCE,
  models: [side("de-en", ["the", "old", "house", "."], [0, 1, 2, 2, 3, -1], 2, 2, SOURCE.length),
    side("opus", ["the", "very", "old", "house", "."], [0, 1, 2, 3, 4, -1], 1, 3, SOURCE.length)],
  shared: [{word: "the", a: 0, b: 0, distance: 0.1}, {word: "old", a: 1, b: 2, distance: 0.2},
    {word: "house", a: 2, b: 3, distance: 0.3}, {word: ".", a: 3, b: 4, distance: 0.4}]});

test("each block of rows is read where the server put it: the mean, each layer's mean, each head", () => {
  const u = unpacked(MESSAGE.models[A], SOURCE.length);
  assert.deepEqual([u.L, u.H, u.W, u.V], [2, 2, 4, 5]);
  assert.equal(block(null, 2, 2), 0);
  assert.equal(block([1], 2, 2), 2);
  assert.equal(block([1, 0], 2, 2), 1 + 2 + 2);
  assert.equal(block([5, 0], 2, 2), 0); // a head the model does not have: the mean
  const first = (focus, w) => rowOf(u, w, focus)[0];
  assert.ok(Math.abs(first(null, 2) - 0.12) < 1e-4);
  assert.ok(Math.abs(first([0], 1) - 0.21) < 1e-4);
  assert.ok(Math.abs(first([1, 1], 3) - (7 / 10 + 3 / 100)) < 1e-4);
  const row = rowOf(u, 0, [0, 1]);
  assert.equal(row.length, 5);
  assert.ok(Math.abs(row.reduce((s, v) => s + v, 0) - 1) < 1e-4);
});

test("the focus choices name the mean, each layer's mean and each head, and read back", () => {
  const choices = headChoices(2, 2);
  assert.deepEqual(choices.map(([, text]) => text), ["mean of all heads", "Layer 1 · mean", "Layer 1 · Head 1",
    "Layer 1 · Head 2", "Layer 2 · mean", "Layer 2 · Head 1", "Layer 2 · Head 2"]);
  for (const [value] of choices) assert.equal(choiceOf(focusOfChoice(value)), value);
});

test("the page's step shows the word its token is a piece of, and a word is shown at its last piece's step", () => {
  const a = MESSAGE.models[A];
  assert.deepEqual([0, 1, 2, 3, 4, 5, 6].map((s) => wordAtStep(a, s)), [null, 0, 1, 2, 2, 3, null]);
  assert.deepEqual([0, 1, 2, 3].map((w) => stepOfWord(a, w)), [1, 2, 4, 5]);
});

test("a shared word is followed to the same word; an inserted word has no partner", () => {
  assert.deepEqual(follow(MESSAGE, A, 1), {word: 2, shared: true}); // "old" is B's third word
  assert.deepEqual(follow(MESSAGE, B, 3), {word: 2, shared: true});
  assert.deepEqual(follow(MESSAGE, B, 1), {word: null, shared: false}); // "very": A writes nothing there
  assert.deepEqual(follow(MESSAGE, A, null), {word: null, shared: false});
});

test("a word not shared is followed to the word written in the same place, between the shared words", () => {
  const message = {...MESSAGE, models: [{...MESSAGE.models[A], words: ["the", "big", "house", "."]},
    {...MESSAGE.models[B], words: ["the", "large", "red", "house", "."]}],
  shared: [{word: "the", a: 0, b: 0, distance: 0}, {word: "house", a: 2, b: 3, distance: 0},
    {word: ".", a: 3, b: 4, distance: 0}]};
  assert.deepEqual(follow(message, A, 1), {word: 1, shared: false}); // "big" ~ "large"
  assert.deepEqual(follow(message, B, 1), {word: 1, shared: false});
  assert.deepEqual(follow(message, B, 2), {word: null, shared: false}); // "red": A's gap holds one word only
  const none = {...message, shared: []}; // no word in common: each word is its place
  assert.deepEqual(follow(none, A, 3), {word: 3, shared: false});
  assert.deepEqual(follow(none, B, 4), {word: null, shared: false}); // A has four words
});

test("the summary says where the outputs first differ and the distance at each shared word", () => {
  assert.deepEqual(firstDifference(MESSAGE), {at: 1, a: "old", b: "very"});
  const line = pairSummary(MESSAGE);
  assert.match(line, /first differ at word 2: A writes “old”, B “very”/);
  assert.match(line, /share 4 of 4 and 5 words/);
  assert.match(line, /Jensen–Shannon distance \(base 2/);
  assert.match(line, /the 0\.10 · old 0\.20 · house 0\.30 · \. 0\.40 \(mean 0\.25\)/);
  const same = {...MESSAGE, models: [MESSAGE.models[A], MESSAGE.models[A]]};
  assert.match(pairSummary(same), /^The two outputs are the same, word for word \(4 words\)\./);
  const shorter = {...MESSAGE, models: [MESSAGE.models[A], {...MESSAGE.models[A], words: ["the", "old"]}],
    shared: []};
  assert.match(pairSummary(shorter), /word 3: A writes “house”, B nothing more\. They share no word/);
  const unmeasured = {...MESSAGE, shared: [{...MESSAGE.shared[0], distance: null}, ...MESSAGE.shared.slice(1)]};
  assert.match(pairSummary(unmeasured), /the – · old 0\.20 · house 0\.30 · \. 0\.40 \(mean 0\.30\)/);
});

test("the message is used only for the page's decoding as it stands, every token of it", () => {
  const d = {steps: [5, 6, 7].map((token) => ({token}))};
  assert.ok(!pairUsable(MESSAGE, d, {serial: 3, version: 4})); // the page holds three of its six tokens: a Back since
  const whole = {steps: MESSAGE.tokens.map((token) => ({token}))};
  assert.ok(pairUsable(MESSAGE, whole, {serial: 3, version: 4}));
  assert.ok(!pairUsable(MESSAGE, whole, {serial: 4, version: 1})); // another run
  assert.ok(!pairUsable(MESSAGE, {steps: [5, 6, 7, 8, 1, 2].map((token) => ({token}))}, {serial: 3, version: 2})); // a what-if
  assert.ok(!pairUsable({...MESSAGE, op: "flow"}, whole, {serial: 3, version: 1}));
  assert.ok(!pairUsable(MESSAGE, {steps: [...whole.steps, {token: 4}]}, {serial: 3, version: 5})); // a Step since
  assert.ok(!pairUsable(MESSAGE, null, {serial: 3, version: 1}));
});

test("what each side shows follows the page's step, or a word clicked in B", () => {
  assert.deepEqual(shownWords(MESSAGE, 4, null), {words: [2, 3], shared: true, from: A});
  assert.deepEqual(shownWords(MESSAGE, 0, null), {words: [null, null], shared: false, from: A});
  assert.deepEqual(shownWords(MESSAGE, 2, {side: B, word: 1}), {words: [null, 1], shared: false, from: B});
});

test("the figure draws A's bars to the left and B's to the right on one scale, the source words between", () => {
  const fig = pairFigure(MESSAGE, [1, null], [[0.1, 0.5, 0.2, 0.1, 0.1], null], 800);
  assert.equal(fig.data.length, 2);
  assert.deepEqual(fig.data[0].x, [0.1, 0.5, 0.2, 0.1, 0.1]);
  assert.deepEqual(fig.data[1].x, [0, 0, 0, 0, 0]); // B shows no word
  assert.ok(fig.layout.xaxis.range[0] > fig.layout.xaxis.range[1]); // A's axis runs leftwards
  assert.deepEqual(fig.layout.xaxis2.range, [0, fig.layout.xaxis.range[0]]);
  assert.deepEqual(fig.layout.yaxis2.ticktext, SOURCE);
  assert.ok(fig.layout.xaxis.domain[1] < fig.layout.xaxis2.domain[0]); // room for the words
  assert.match(fig.layout.annotations[0].text, /^A · “old”$/);
  assert.match(fig.layout.annotations[1].text, /^B · no word here$/);
  assert.deepEqual([band(2).y0, band(2).y1, band(2).xref], [1.5, 2.5, "paper"]);
});
