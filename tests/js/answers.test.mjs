import assert from "node:assert/strict";
import {test} from "node:test";

import {Answers} from "../../attention_lab/decoding/answers.mjs";
import {page} from "../../attention_lab/assets/store.mjs";

const FINISHED = {output: "cba", status: "Finished", canStep: false, canBack: true, original: {value: null, label: ""}};

test("an answer to an event sent before the page wrote the loop's outputs is written over again, a newer one stands", () => {
  const rewritten = [];
  const answers = new Answers((outputs) => rewritten.push(outputs));
  page.key = {serial: 1, version: 1};
  answers.sending(3); // the Source's redraw, sent
  answers.answered(3);
  assert.deepEqual(rewritten, []); // the page wrote nothing yet: the answer stands
  answers.sending(3); // typed again, then Run in the page before the answer came
  page.key = {serial: 2, version: 1};
  answers.wrote(FINISHED);
  answers.wrote({status: "A line said"}); // a line alone: the rest as written
  answers.answered(3);
  assert.deepEqual(rewritten, [{...FINISHED, status: "A line said"}]);
  answers.sending(7); // a tab opened since, with the page's decoding: its answer is newer
  answers.answered(7);
  answers.sending(3);
  answers.answered(3);
  assert.equal(rewritten.length, 1);
});

test("the page's outputs are not written again over another decoding than the one they were written for", () => {
  const rewritten = [];
  const answers = new Answers((outputs) => rewritten.push(outputs));
  answers.sending(1);
  page.key = {serial: 4, version: 2};
  answers.wrote(FINISHED);
  page.key = {serial: 5, version: 1}; // the server's decoding came since (a click it answered)
  answers.answered(1);
  answers.answered(9); // an event never sent through the page's wiring
  assert.deepEqual(rewritten, []);
});
