// The page's two graphs (attention_lab/page_copy/graphs.py, in any precision: page_copy/precision.py) decoded greedily
// in Node on onnxruntime-web's WebAssembly backend (its `onnxruntime-web/wasm` entry, one thread), for
// tests/test_precision.py to compare with Python's onnxruntime on the same graphs:
//   node tests/js/graphs_decode.mjs DIR REQUEST.json > ANSWER.json
// DIR holds encoder.onnx, decoder.onnx, weights.bin and config.json (the page's config). REQUEST: {sources: [[id...]],
// steps: n}. ANSWER: {tokens: [[id...] per source, at most n each, eos included], ms: the decoding's milliseconds}.

import fs from "node:fs";
import path from "node:path";
import {fileURLToPath} from "node:url";
import * as ort from "onnxruntime-web/wasm";

const [dir, requestFile] = process.argv.slice(2);
const request = JSON.parse(fs.readFileSync(requestFile, "utf8"));
const config = JSON.parse(fs.readFileSync(path.join(dir, "config.json"), "utf8"));
const dist = path.dirname(fileURLToPath(import.meta.resolve("onnxruntime-web/wasm")));
ort.env.wasm.numThreads = 1;
ort.env.wasm.wasmBinary = fs.readFileSync(path.join(dist, "ort-wasm-simd-threaded.wasm"));

const read = (name) => new Uint8Array(fs.readFileSync(path.join(dir, name)));
const options = {
  executionProviders: ["wasm"],
  graphOptimizationLevel: "all",
  externalData: [{path: "weights.bin", data: read("weights.bin")}],
};
const encoder = await ort.InferenceSession.create(read("encoder.onnx"), options);
const decoder = await ort.InferenceSession.create(read("decoder.onnx"), options);
const {n_heads: H, n_encoder_layers: Le, n_decoder_layers: Ld} = config;
const K = config.head_dim || config.d_model / H;
const ones = (layers) => new ort.Tensor("float32", new Float32Array(layers * H).fill(1), [layers, H]);

/** Only the feeds a session takes (a graph drops an input it does not need). */
const fed = (session, feeds) => Object.fromEntries(session.inputNames.map((name) => [name, feeds[name]]));

async function decode(ids, steps) {
  const source = new ort.Tensor("int64", BigInt64Array.from(ids.map(BigInt)), [1, ids.length]);
  const encoded = await encoder.run(fed(encoder, {source, keep_encoder: ones(Le)}));
  let past_k = new ort.Tensor("float32", new Float32Array(0), [Ld, H, 0, K]);
  let past_v = past_k;
  let token = config.bos_id;
  const tokens = [];
  while (tokens.length < steps) {
    const feeds = {token: new ort.Tensor("int64", BigInt64Array.from([BigInt(token)]), [1, 1]), past_k, past_v,
      cross_k: encoded.cross_k, cross_v: encoded.cross_v, keep_self: ones(Ld), keep_cross: ones(Ld)};
    const out = await decoder.run(fed(decoder, feeds));
    const logits = out.logits.data;
    token = 0;
    for (let i = 1; i < logits.length; i++) if (logits[i] > logits[token]) token = i;
    tokens.push(token);
    ({next_k: past_k, next_v: past_v} = out);
    if (token === config.eos_id) break;
  }
  return tokens;
}

const started = performance.now();
const tokens = [];
for (const ids of request.sources) tokens.push(await decode(ids, request.steps));
process.stdout.write(JSON.stringify({tokens, ms: performance.now() - started}));
