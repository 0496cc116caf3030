// The copy's gzipped files (its explanations' graphs, the runtime's WebAssembly) gunzipped as the page unpacks them
// (page_copy/model.mjs gunzipped), with the bytes Python's gzip wrote (page_copy/analyses.py packed).

import assert from "node:assert/strict";
import {execFileSync} from "node:child_process";
import test from "node:test";
import {fileURLToPath} from "node:url";

import {graphFile, gunzipped} from "../../attention_lab/page_copy/model.mjs";

const PYTHON = process.env.PYTHON || "python3"; // the tests' own (test_page_modules.py hands it in)
const REPO = fileURLToPath(new URL("../..", import.meta.url));

test("a graph packed by the copy unpacks to its bytes", async () => {
  const graph = Uint8Array.from({length: 5000}, (_, i) => (i * 7919) % 251);
  const packed = execFileSync(PYTHON, ["-c", `import sys; from attention_lab.page_copy.analyses import packed
sys.stdout.buffer.write(packed(bytes(i * 7919 % 251 for i in range(5000))))`], {cwd: REPO});
  assert.equal(packed[0], 0x1f); // gzip's, not the graph's own
  assert.ok(packed.length < graph.length);
  assert.deepEqual(await gunzipped(new Uint8Array(packed)), graph);
});

test("bytes a host already gunzipped (Content-Encoding: gzip) are taken as they are", async () => {
  const graph = Uint8Array.from([8, 7, 18, 1, 0]); // an ONNX model's first bytes are never gzip's 1f 8b
  assert.deepEqual(await gunzipped(graph), graph);
});

test("a graph's file is the name with .onnx.gz, as the copy writes it", () => {
  assert.equal(graphFile("patching"), "patching.onnx.gz");
});
