// The live page's decoding (attention_lab/page_copy/model.mjs and messages.mjs) run in Node, on the runtime and the
// tokenizer library the page carries, for tests/test_live.py to compare with the library:
//   node tests/js/live_decode.mjs DIR REQUEST.json > ANSWER.json
// DIR holds what export/live.py's parts() and config() give (encoder.onnx, decoder.onnx, weights.bin,
// tokenizer.json, config.json). REQUEST: {tokenize: [text...], decode: [text...], what_if: [[text, step, token]...]}.
// ANSWER: per text to tokenize its ids and notice or error; per text to decode its tokens, every step's weights and
// the page's messages (the whole decoding, and each step as a step more); per what-if the decoding after it. With
// `views: [server's Decoding...]` (the server's payload.full of the first texts to decode), the views' figures
// (core/figures.mjs kindFigures) of the page's decoding and of the server's, for every kind, step, reading,
// unit and head: `views` answers how many were drawn and the largest difference in any cell.

import fs from "node:fs";
import path from "node:path";
import {LAB, loadCopy} from "./page_copy.mjs";

const {InputError} = await import(path.join(LAB, "page_copy/model.mjs"));
const {full, more} = await import(path.join(LAB, "decoding/messages.mjs"));
const {errors} = await import("./messages.mjs"); // the checked-in schema's errors for a message ("" when none)
const store = await import(path.join(LAB, "assets/store.mjs"));
const {Decoding} = await import(path.join(LAB, "assets/decoding.mjs"));
const {kindFigures} = await import(path.join(LAB, "core/figures.mjs"));

const [dir, requestFile] = process.argv.slice(2);
const model = await loadCopy(dir);
const request = JSON.parse(fs.readFileSync(requestFile, "utf8"));

function source(text) {
  try {
    return model.source(text);
  } catch (err) {
    if (err instanceof InputError) return {error: err.message};
    throw err;
  }
}

async function decode(text, whatIf = null) {
  const {ids} = model.source(text);
  const session = await model.start(ids);
  const steps = [];
  while (!session.finished) {
    const after = {serial: 1, version: steps.length};
    await session.step();
    steps.push(more(session, {serial: 1, version: steps.length + 1}, after));
  }
  if (whatIf) {
    const [at, token] = whatIf;
    while (session.steps.length >= at) session.back();
    await session.step(token);
    await session.run();
  }
  const message = full(session, {serial: 1, version: 0}, session.steps.length);
  return {
    schema: [message, ...steps].map(errors).filter(Boolean),
    ids,
    tokens: session.tokens,
    weights: session.steps.map((s) => ({self: [...s.self], cross: [...s.cross], self_norms: [...s.selfNorms],
      prob: s.prob, top: s.topIds})),
    encoder: [...session.encoder],
    full: message,
    steps: whatIf ? [] : steps,
  };
}

/** Every figure of `ours` and `theirs` (two Decoding records of one decoding) side by side: [count, largest |dz|]. */
function compareViews(ours, theirs) {
  const [a, b] = [new Decoding(ours), new Decoding(theirs)];
  const size = {focusHeight: 400, gridWidth: 400};
  let drawn = 0, largest = 0;
  for (const kind of store.page.names.order) {
    for (let shown = 0; shown <= a.steps.length; shown++) {
      for (const reading of Object.keys(store.page.names.readings)) {
        for (const words of [true, false]) {
          for (const focus of [null, [0, 0], [a.Ld - 1, a.H - 1]]) {
            const look = {words, hideSpecials: !words, scale: "linear", focus, reading};
            const [x, y] = [a, b].map((d) => kindFigures(d, kind, shown, look, size).focus);
            const [zx, zy] = [x, y].map((f) => (f.data[0] && f.data[0].z ? f.data[0].z.flat() : []));
            if (JSON.stringify(x.data[0]?.x) !== JSON.stringify(y.data[0]?.x) || zx.length !== zy.length) {
              throw new Error(`${kind} step ${shown} ${reading}: the figures differ in shape or labels`);
            }
            zx.forEach((v, i) => (largest = Math.max(largest, Math.abs((v ?? 0) - (zy[i] ?? 0)))));
            drawn++;
          }
        }
      }
    }
  }
  return [drawn, largest];
}

const answer = {tokenize: (request.tokenize || []).map(source), decode: [], what_if: []};
const started = performance.now();
for (const text of request.decode || []) answer.decode.push(await decode(text));
answer.decode_ms = performance.now() - started;
for (const [text, at, token] of request.what_if || []) answer.what_if.push(await decode(text, [at, token]));
if (request.views) {
  store.setNames(request.names);
  answer.views = request.views.map((theirs, i) => compareViews(answer.decode[i].full.data, theirs));
}
process.stdout.write(JSON.stringify(answer));
