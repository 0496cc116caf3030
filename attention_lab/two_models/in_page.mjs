// The Two models tab's message made in the page, as two_models/feature.py `view` makes it on the server: side A is
// the page's decoding, side B another model's page copy (one the page can load: assets/here.mjs otherCopies)
// decoding the same source greedily within /compare_models's limits; both in words (words.mjs), B's rows lined up on
// A's source words, the words the two outputs share and how far apart their rows are there. What B would read to
// write A's words (forced on it), and a training snapshot as side B, are the server's.
// tests/test_two_models_in_page.py holds the message equal to the server's.

import {pyFormat} from "../assets/format.mjs";
import {otherCopies, textsOf} from "../assets/here.mjs";
import {q16} from "../decoding/messages.mjs";
import {decodedAgain} from "../decoding/again.mjs";
import {InputError} from "../page_copy/model.mjs";
import {linedUp, sharedOf, wordAttention} from "./words.mjs";

/** What the tab's controls ask (two_models/feature.py SECOND, WRITES), as the page shows them. */
export function twoModelsAsked() {
  const second = globalThis.document?.querySelector("#two-models-second input, #two-models-second select")?.value ?? "";
  const writes = globalThis.document?.querySelector("#two-models-writes input:checked")?.value ?? textsOf("two_models").own;
  return {second, writes};
}

/** Whether the page makes the tab's message now: no side B chosen, or one whose copy the page can load, writing its
 * own output (A's words forced on it, or a training snapshot: the server's). */
export function twoModelsNow(model, asked = twoModelsAsked()) {
  if (!asked.second) return true;
  return asked.writes === textsOf("two_models").own && otherCopies().has(asked.second);
}

/** The message for the decoding `run` of the page copy `model` (side A), with side B and what it writes as
 * `asked` says. */
export async function made(model, run, asked) {
  const t = textsOf("two_models");
  const a = await side(model, run.session ?? await decodedAgain(model, run, run.limit ?? null));
  const base = {key: run.key, tokens: [...run.tokens], source_words: a.found.source_words, models: [], shared: []};
  const failed = (error) => ({...base, error, op: "two_models"});
  if (!asked.second) return failed(t.choose);
  let b;
  try {
    const other = await otherCopies().load(asked.second);
    b = await side(other, await decoded(other, run.text, t));
    b.found = linedUp(a.found, b.found, t.different);
  } catch (err) {
    if (err instanceof InputError) return failed(err.message);
    throw err;
  }
  const models = [modelSide(a), modelSide(b)];
  return {...base, models, shared: sharedOf(a.found, b.found), op: "two_models"};
}

/** `text` decoded greedily by `model` within /compare_models's limits (Request.within, Request.run). */
async function decoded(model, text, t) {
  const {ids} = model.source(text); // the model's own message for a source it cannot read
  const n = model.config.marks_source ? model.ids(text, true).length : model.ids(text).length + 1; // before any cut
  const [most, newMost] = t.limits;
  if (n > most) throw new InputError(pyFormat(t.too_long, {n, endpoint: t.endpoint, most}));
  const s = await model.start(ids, 8, Math.min(model.config.max_new_tokens, newMost));
  await s.run();
  return s;
}

/** One side: the copy's name, its decoding in words, its tokens' labels. */
async function side(model, s) {
  return {name: model.config.name, found: wordAttention(model, s), labels: s.tokens.map((id) => model.label(id))};
}

/** messages.py model_side: a side's words and every row the tab can show, packed (the mean of all heads, each
 * layer's mean, then each head's, layer by layer). */
function modelSide({name, found, labels}) {
  const L = found.heads.length, H = L ? found.heads[0].length : 0;
  const rows = [found.attention, ...found.layers, ...found.heads.flat()].flat(2);
  return {model: name, tokens: labels, words: found.output_words, token_words: found.token_words, layers: L, heads: H,
    rows: q16(rows)};
}
