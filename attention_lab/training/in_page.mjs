// The Training tab's film made in the page: the model at each snapshot of its training (the page copy's snapshots,
// attention_lab/page_copy/snapshots.py: the copy's graphs with each snapshot's weights) decoding the run's source
// greedily, as training/feature.py `film` makes it on the server with the library: each snapshot's output, its
// whole decoding (the payload the step loop draws), the best cross head's alignment on this source where a gold
// alignment is known (core/summaries.mjs), and its line of measures in the server's words (Feature.texts).
// tests/test_training_in_page.py holds the two films equal.

import {pyFormat} from "../assets/format.mjs";
import {textsOf} from "../assets/here.mjs";
import {headSummaries} from "../core/summaries.mjs";
import {decoding} from "../decoding/messages.mjs";
import {InputError, LiveModel} from "../page_copy/model.mjs";
import {created} from "../page_copy/session.mjs";

const WEIGHTS = "weights.bin"; // the file a snapshot's graphs read their weights from, as the copy's own

/** Whether the page makes the film of the page copy `model`: it carries its snapshots, or says why the model has
 * none (null: not known yet). */
export function filmed(model) {
  return !model || Boolean(model.config.snapshots?.length) || Boolean(model.config.untrained);
}

const films = new WeakMap(); // a page copy -> its last film: {id, promise} (a Step decodes no snapshot again)

/** The film of the source the Source box holds (`run.asked.source`; the decoding `run`'s own, `run.ids`, where none
 * is given), with the decoding's length limit (`run.limit`), for the page copy `model`: every snapshot decoding it,
 * as the server films the source typed, Run or not. A source the model cannot read gives the film its message. */
export function made(model, run) {
  const none = (message) => Promise.resolve({snapshots: [], model: "", factors: {}, message, op: "film"});
  if (!model.config.snapshots?.length) return none(model.config.untrained); // the server's words: no training here
  let ids = run.ids;
  if (run.asked?.source != null) {
    try {
      ids = model.source(run.asked.source).ids;
    } catch (err) {
      if (!(err instanceof InputError)) throw err;
      return none(err.message);
    }
  }
  // as long as validation let each write (Seq2SeqPipeline.generate's limit: an untrained model babbles)
  const most = Math.min(run.limit || Infinity, model.config.max_new_tokens, 2 * ids.length + 10);
  const id = JSON.stringify([ids, most]), held = films.get(model);
  if (held?.id === id) return held.promise;
  const promise = film(model, ids, most);
  films.set(model, {id, promise});
  promise.catch(() => films.get(model)?.promise === promise && films.delete(model));
  return promise;
}

/** Every snapshot's frame of the source `ids`, each decoding at most `most` tokens. */
async function film(model, ids, most) {
  const t = textsOf("training"), c = model.config;
  const snapshots = [];
  for (const listed of c.snapshots) snapshots.push(await frame(model, listed, ids, most, t));
  const factors = Object.fromEntries(Object.values(t.scores).map(([name, factor]) => [name, factor]));
  return {snapshots, model: c.name, factors, message: "", op: "film"};
}

/** One snapshot's frame (training/feature.py Frame): decoded by its own copy, or the model's for the last. */
async function frame(model, listed, ids, most, t) {
  const scores = Object.fromEntries(Object.entries(t.scores).map(([key, [name]]) => [name, listed.metrics[key] ?? null]));
  const shown = {step: listed.step, info: "", output: "", data: null, error: listed.error, loss: listed.metrics.valid_loss ?? null,
    alignment: null, scores};
  if (!listed.error) {
    const at = listed.folder ? await snapshotModel(model, listed.folder) : model;
    const s = await at.start(ids, 5, most); // the library's top_k (DecodingSession)
    await s.run();
    shown.output = model.tokenizer.decode(s.tokens, {skip_special_tokens: true});
    shown.data = decoding(s);
    if (model.config.gold_alignment) {
      shown.alignment = Math.max(...headSummaries(at, ids, s).cross.flatMap((layer) => layer.map((h) => h.alignment)));
    }
  }
  shown.info = line(model, listed, shown, t);
  return shown;
}

/** training/feature.py `describe`: the snapshot's step and what was measured there, or why it cannot be shown. */
function line(model, listed, shown, t) {
  let head = pyFormat(t.head, {step: listed.step.toLocaleString("en-US")});
  if (listed.model) head = pyFormat(t.the_model, {head, model: model.config.name});
  if (shown.error) return `${head}: ${shown.error}`;
  const parts = shown.output === "" ? [head, t.silent] : [head];
  for (const [key, said] of Object.entries(t.measures)) {
    if (listed.metrics[key] != null) parts.push(pyFormat(said, {value: listed.metrics[key]}));
  }
  if (shown.alignment !== null) parts.push(pyFormat(t.aligned, {value: shown.alignment}));
  return parts.join(" · ");
}

const snapshotModels = new WeakMap(); // a page copy -> Map(folder -> its snapshot's LiveModel, as a promise)

/** The snapshot whose files are in `folder` of the copy, loaded once: its graphs and weights, the copy's tokenizer
 * and config. */
function snapshotModel(model, folder) {
  if (!snapshotModels.has(model)) snapshotModels.set(model, new Map());
  const kept = snapshotModels.get(model);
  if (!kept.has(folder)) {
    const loading = (async () => {
      const [encoder, decoder, weights] = await Promise.all(
        ["encoder.onnx", "decoder.onnx", WEIGHTS].map((name) => model.file(folder + name)));
      const options = {...model.options, externalData: [{path: WEIGHTS, data: weights}]};
      const sessions = [await created(model.ort, encoder, options), await created(model.ort, decoder, options)];
      const snapshot = new LiveModel(model.ort, sessions, model.tokenizer, model.config);
      // its runs wait their turn with the copy's own: the runtime runs one at a time (two at once, on its threads,
      // held the page's thread for good)
      snapshot.run = (graph, inputs) => model.run(graph, inputs);
      return snapshot;
    })();
    kept.set(folder, loading);
    loading.catch(() => kept.get(folder) === loading && kept.delete(folder));
  }
  return kept.get(folder);
}
