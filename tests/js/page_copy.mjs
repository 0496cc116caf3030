// A model's page copy (attention_lab/page_copy/copies.py: encoder.onnx, decoder.onnx, weights.bin, tokenizer.json,
// config.json) loaded in Node as the page loads it, on the runtime and the tokenizer library the page carries: what
// the Node runners of the tests decode with (live_decode.mjs, loop_decode.mjs).

import fs from "node:fs";
import path from "node:path";
import zlib from "node:zlib";
import {fileURLToPath} from "node:url";

export const LAB = path.join(path.dirname(fileURLToPath(import.meta.url)), "../../attention_lab");
const VENDOR = path.join(LAB, "page_copy/vendor");

/** The LiveModel of the copy in `dir`. */
export async function loadCopy(dir) {
  const ort = await import(path.join(VENDOR, "ort.wasm.bundle.min.mjs"));
  const {Tokenizer} = await import(path.join(VENDOR, "tokenizers.min.mjs"));
  const {LiveModel} = await import(path.join(LAB, "page_copy/model.mjs"));
  ort.env.wasm.numThreads = 1;
  ort.env.wasm.wasmBinary = zlib.gunzipSync(fs.readFileSync(path.join(VENDOR, "ort-wasm-simd-threaded.wasm.gz")));
  const read = (name) => new Uint8Array(fs.readFileSync(path.join(dir, name)));
  const json = (name) => JSON.parse(fs.readFileSync(path.join(dir, name), "utf8"));
  const model = await LiveModel.load(ort, Tokenizer, {
    encoder: read("encoder.onnx"), decoder: read("decoder.onnx"), weights: read("weights.bin"),
    tokenizer: json("tokenizer.json"), config: json("config.json"),
  });
  model.files = read; // the copy's other files (LiveModel.file)
  return model;
}
