import assert from "node:assert/strict";
import {test} from "node:test";

import {focusChoices, focusOf, percent} from "../../attention_lab/assets/style.mjs";
import {axisLabels, escapeToken, labelPx, MAX_LABEL, unique, wrapped} from "../../attention_lab/assets/labels.mjs";

test("a focus label reads back as its 0-based layer and head; anything else is the mean", () => {
  assert.deepEqual(focusOf("Layer 2 · Head 3"), [1, 2]);
  for (const label of ["Mean (test)", "Layer 0 · Head 1", "layer 2 · head 3", null, ""]) assert.equal(focusOf(label), null);
  assert.deepEqual(focusChoices(2, 2, "Mean (test)"), ["Mean (test)", "Layer 1 · Head 1", "Layer 1 · Head 2", "Layer 2 · Head 1", "Layer 2 · Head 2"]);
});

test("a probability reads as people read it", () => {
  for (const [p, text] of [[0.42, "42%"], [0.1, "10%"], [0.0123, "1.2%"], [0.003, "0.3%"], [0.0001, "0.01%"], [0.00001, "<0.01%"]]) {
    assert.equal(percent(p), text, String(p));
  }
});

test("token text reaches plotly escaped, cut, and kept apart when repeated", () => {
  assert.equal(escapeToken("<b>&</b>"), "&lt;b&gt;&amp;&lt;/b&gt;");
  assert.equal(escapeToken(""), "∅");
  assert.deepEqual(unique(["a", "b", "a", "a"]), ["a", "b", "a\u200b", "a\u200b\u200b"]);
  const long = "x".repeat(MAX_LABEL + 5);
  const [cut] = axisLabels([long]);
  assert.equal([...cut].length, MAX_LABEL) && assert.ok(cut.endsWith("…"));
  assert.ok(labelPx(["abc"]) < labelPx(["abcdefghij"]));
});

test("text wraps at spaces into lines of at most the given characters, each escaped", () => {
  assert.deepEqual(wrapped("a head parked on </s> does little", 12), ["a head", "parked on", "&lt;/s&gt; does", "little"]);
  assert.deepEqual(wrapped("short", 40), ["short"]);
  assert.deepEqual(wrapped("averyveryverylongword x", 5), ["averyveryverylongword", "x"]); // a word is never cut
});
