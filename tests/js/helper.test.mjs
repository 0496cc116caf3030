import assert from "node:assert/strict";
import {test} from "node:test";

import {helperOf, runAll} from "../../attention_lab/page_copy/helper.mjs";

/** A model whose page thread answers each run with where it ran, and a second thread (`helper`) that does too. */
function model(helper) {
  const ran = [];
  const made = {
    ran,
    explain: async (name, inputs) => { ran.push(["page", inputs.n]); return {n: inputs.n, on: "page"}; },
  };
  if (helper !== undefined) made.helpers = new Map([["ablations", {ready: helper, started: Promise.resolve()}]]);
  return made;
}

const parts = [{n: 0}, {n: 1}, {n: 2}, {n: 3}];

test("with a second thread ready, the odd parts run there and the even on the page's, the answers in order", async () => {
  const helper = {run: async (inputs) => ({n: inputs.n, on: "helper"})};
  const m = model(helper);
  const outs = await runAll(m, "ablations", parts);
  assert.deepEqual(outs.map((o) => [o.n, o.on]), [[0, "page"], [1, "helper"], [2, "page"], [3, "helper"]]);
});

test("a second thread that fails hands its parts to the page's, and is not asked again", async () => {
  const helper = {run: async () => { throw new Error("lost"); }};
  const m = model(helper);
  const outs = await runAll(m, "ablations", parts);
  assert.deepEqual(outs.map((o) => [o.n, o.on]), parts.map((p) => [p.n, "page"]));
  helper.broken = new Error("lost");
  helper.run = () => assert.fail("a broken thread is not asked");
  assert.equal((await runAll(m, "ablations", parts)).length, 4);
});

test("where none can be started (no Worker, no runtime address: Node), every part runs on the page's thread", async () => {
  const m = {...model(), ort: {env: {wasm: {}}}};
  assert.equal(helperOf(m, "ablations"), null);
  await m.helpers.get("ablations").started;
  const outs = await runAll(m, "ablations", parts);
  assert.deepEqual(outs.map((o) => o.on), ["page", "page", "page", "page"]);
  assert.equal(m.helpers.get("ablations").ready, null);
});
