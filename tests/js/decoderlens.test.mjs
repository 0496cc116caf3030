import assert from "node:assert/strict";
import {test} from "node:test";

import {decoderLensRows} from "../../attention_lab/why/decoderlens.mjs";
import {valid} from "./messages.mjs";

const layer = (n, tokens, ended = true) => ({layer: n, tokens: ended ? [...tokens, "</s>"] : tokens,
  text: tokens.join(" "), ended});

test("the DecoderLens: the last layer is the model's output, earlier layers writing the same are marked", () => {
  const message = valid({op: "decoderlens", limit: 3, layers: [layer(0, ["a", "b", "a"], false), layer(1, ["c"]),
    layer(2, ["b"]), layer(3, ["b"])]});
  const {rows, settled} = decoderLensRows(message);
  assert.deepEqual(rows.map((r) => r.name), ["0 (embeddings)", "1", "2", "3"]);
  assert.deepEqual(rows.map((r) => r.mark), ["", "", "same as the output", "the model's output"]);
  assert.equal(settled, 2); // layers 2 and 3 write the output; layer 1 does not
  assert.equal(rows[0].more, " … (no end within 3 tokens)");
  assert.equal(rows[1].more, "");
  assert.equal(rows[1].tokens, "c · </s>");
});

test("the DecoderLens: a layer that writes the output between two that do not does not settle it", () => {
  const message = valid({op: "decoderlens", limit: 9, layers: [layer(0, ["b"]), layer(1, ["c"]), layer(2, ["b"])]});
  const {rows, settled} = decoderLensRows(message);
  assert.deepEqual(rows.map((r) => r.mark), ["same as the output", "", "the model's output"]);
  assert.equal(settled, 2);
  assert.equal(decoderLensRows(valid({op: "decoderlens", limit: 9, layers: [layer(0, [])]})).rows[0].text, "∅");
});

test("the DecoderLens: an error is said, and another message or none draws nothing", () => {
  const failed = valid({op: "decoderlens", limit: 9, layers: [], error: "The DecoderLens failed: x"});
  assert.deepEqual(decoderLensRows(failed), {error: "The DecoderLens failed: x"});
  assert.equal(decoderLensRows(null), null);
  assert.equal(decoderLensRows({op: "computing", text: "…"}), null);
});
