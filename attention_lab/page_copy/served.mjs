// A model's page copy as the app serves it (page_copy/copies.py; decoding/in_page.mjs loads it): the runtime and the
// tokenizer library, once; the copy's graphs, weights, tokenizer and config, once the app has made them; and its
// explanations' graphs.

import {RUNTIME_ADDRESS} from "./helper.mjs";
import {graphFile, LiveModel, gunzipped} from "./model.mjs";

// a copy is made as the app starts (a transformers model's, measured in two precisions, can take minutes): ask for it
// every second at first, then less often, for up to an hour
const POLL_MS = 1000, POLL_MAX_MS = 10_000, POLL_TRIES = 400;

async function bytes(address) {
  const answer = await fetch(new URL(address, document.baseURI));
  if (!answer.ok) throw new Error(`${address.split("/").pop()}: ${answer.status} ${answer.statusText}`);
  return new Uint8Array(await answer.arrayBuffer());
}

/** The runtime and the tokenizer library, loaded once. */
export async function loadRuntime(runtime) {
  const at = (address) => new URL(address, document.baseURI).href;
  const [ort, tokenizers, wasm] = await Promise.all([import(at(runtime.ort)), import(at(runtime.tokenizers)),
    bytes(runtime.wasm).then(gunzipped)]);
  ort.env.wasm.numThreads = 1; // no cross-origin isolation on a Space or a local app: one thread
  ort.env.wasm.wasmBinary = wasm;
  ort.env[RUNTIME_ADDRESS] = at(runtime.ort); // for a graph's second thread (helper.mjs)
  return {ort, Tokenizer: tokenizers.Tokenizer};
}

/** A model's copy, once the app has made it (its config.json is written last). */
export async function loadCopy(folder, {ort, Tokenizer}) {
  for (let tries = 0; ; tries++) {
    const answer = await fetch(new URL(folder + "config.json", document.baseURI));
    if (answer.ok) break;
    if (tries >= POLL_TRIES) throw new Error(`config.json: ${answer.status} ${answer.statusText}`);
    await new Promise((resolve) => setTimeout(resolve, Math.min(POLL_MS * 1.05 ** tries, POLL_MAX_MS)));
  }
  const [encoder, decoder, weights, tokenizer, config] = await Promise.all(
    ["encoder.onnx", "decoder.onnx", "weights.bin", "tokenizer.json", "config.json"].map((f) => bytes(folder + f)));
  const json = (data) => JSON.parse(new TextDecoder().decode(data));
  const model = await LiveModel.load(ort, Tokenizer, {encoder, decoder, weights, tokenizer: json(tokenizer),
    config: json(config)});
  model.folder = folder;
  return model;
}

/** The copy's explanations' graphs (page_copy/analyses.py), loaded into `model` after its decoding graphs (each
 * graph's runtime session made as a tab first runs it: LiveModel.loadAnalyses). */
export async function loadAnalyses(model) {
  const names = model.config.analyses;
  const graphs = await Promise.all(names.map((name) => bytes(model.folder + graphFile(name))));
  return model.loadAnalyses(Object.fromEntries(names.map((name, i) => [name, graphs[i]])));
}
