import assert from "node:assert/strict";
import {test} from "node:test";

import {Helper, helperOf, runAll} from "../../attention_lab/page_copy/helper.mjs";

/** A model whose page thread answers each run with where it ran; with `helper`, a helper thread ready for it. */
function model(helper) {
  const made = {explain: async (name, inputs) => ({n: inputs.n, on: "page"})};
  if (helper !== undefined) made.helpers = new Map([["ablations", {ready: helper, started: Promise.resolve()}]]);
  return made;
}

/** A worker as the page sees one: it answers each message with `answer(message)` ({out} or {err}), or never. */
function worker(answer) {
  const made = new EventTarget();
  made.ended = false;
  made.terminate = () => { made.ended = true; };
  made.postMessage = (message) => {
    const said = answer(message);
    if (said) setTimeout(() => made.dispatchEvent(Object.assign(new Event("message"), {data: {id: message.id, ...said}})));
  };
  return made;
}

const parts = [{n: 0}, {n: 1}, {n: 2}, {n: 3}];
const tensor = (n) => ({n, type: "float32", data: new Float32Array([n]), dims: [1]});

test("with a helper thread ready, the odd parts run there and the even on the page's, the answers in order", async () => {
  const helper = new Helper(worker((m) => ({out: {n: Number(m.inputs.n.data[0]), on: "helper"}})));
  const asked = parts.map(({n}) => ({n: tensor(n)}));
  const m = {explain: async (name, inputs) => ({n: Number(inputs.n.data[0]), on: "page"}),
    helpers: new Map([["ablations", {ready: helper}]])};
  const outs = await runAll(m, "ablations", asked);
  assert.deepEqual(outs.map((o) => [o.n, o.on]), [[0, "page"], [1, "helper"], [2, "page"], [3, "helper"]]);
  assert.equal(helper.runs, 2);
});

test("a run that fails on the helper thread runs on the page's, and the helper is ended and not asked again", async () => {
  let asked = 0;
  const w = worker(() => { asked += 1; return {err: "out of memory"}; });
  const helper = new Helper(w);
  const warned = console.warn;
  console.warn = () => {};
  try {
    const outs = await runAll(model(helper), "ablations", parts);
    assert.deepEqual(outs.map((o) => [o.n, o.on]), parts.map((p) => [p.n, "page"]));
  } finally {
    console.warn = warned;
  }
  assert.equal(helper.broken.message, "out of memory");
  assert.ok(w.ended);
  const before = asked;
  assert.equal((await runAll(model(helper), "ablations", parts)).length, 4);
  assert.equal(asked, before); // every part on the page's thread
});

test("a worker's error ends every run it was asked for, and an answer after it changes nothing", async () => {
  const w = worker(() => null); // never answers
  const helper = new Helper(w);
  const warned = console.warn;
  console.warn = () => {};
  try {
    const running = helper.run({n: tensor(1)});
    w.dispatchEvent(Object.assign(new Event("error"), {message: "lost"}));
    await assert.rejects(running, /lost/);
    w.dispatchEvent(Object.assign(new Event("message"), {data: {id: 0, out: {}}})); // late: ignored
  } finally {
    console.warn = warned;
  }
  assert.ok(w.ended);
});

test("where none can be started (no Worker, no runtime address: Node), every part runs on the page's thread", async () => {
  const m = {...model(), ort: {env: {wasm: {}}}};
  assert.equal(helperOf(m, "ablations"), null);
  await m.helpers.get("ablations").started;
  const outs = await runAll(m, "ablations", parts);
  assert.deepEqual(outs.map((o) => o.on), ["page", "page", "page", "page"]);
  assert.equal(m.helpers.get("ablations").ready, null);
});
