// A session of the runtime that fails once is tried once more (page_copy/session.mjs created); one that fails again
// says why, as the road's fallback line does.

import assert from "node:assert/strict";
import test from "node:test";

import {created} from "../../attention_lab/page_copy/session.mjs";

/** A runtime whose InferenceSession.create fails its first `failures` calls. */
function runtime(failures) {
  const calls = [];
  const create = async (graph, options) => {
    calls.push(graph);
    if (calls.length <= failures) throw new Error("Can't create a session. ERROR_CODE: 0, ERROR_MESSAGE: ");
    return {graph, options};
  };
  return {ort: {InferenceSession: {create}}, calls};
}

test("a session that fails once is made at the second try", async () => {
  const {ort, calls} = runtime(1);
  const warn = console.warn;
  console.warn = () => {};
  try {
    assert.deepEqual(await created(ort, "graph", {a: 1}), {graph: "graph", options: {a: 1}});
  } finally {
    console.warn = warn;
  }
  assert.equal(calls.length, 2);
});

test("a session made at once is tried once, and one that fails twice says why", async () => {
  const once = runtime(0);
  await created(once.ort, "graph", {});
  assert.equal(once.calls.length, 1);
  const twice = runtime(2);
  const warn = console.warn;
  console.warn = () => {};
  try {
    await assert.rejects(created(twice.ort, "graph", {}), /Can't create a session/);
  } finally {
    console.warn = warn;
  }
  assert.equal(twice.calls.length, 2);
});
