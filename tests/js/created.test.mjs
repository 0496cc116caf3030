// The page's sessions of the runtime are made one after another (page_copy/session.mjs created): the runtime keeps
// the external data of the session being made in one map by path, and every graph here names its weights alike.

import assert from "node:assert/strict";
import test from "node:test";

import {created} from "../../attention_lab/page_copy/session.mjs";

/** A runtime that keeps the files of the session being made as ONNX Runtime Web does: mounted in one map by path,
 * read once the mount has been awaited, the whole map emptied once the session is made (or has failed). */
function runtime() {
  let mounted = new Map();
  const create = async (graph, {externalData}) => {
    for (const {path, data} of externalData) mounted.set(path, data);
    await new Promise((resolve) => setTimeout(resolve, 5));
    try {
      if (graph === "broken") throw new Error("Can't create a session. ERROR_CODE: 1");
      const weights = externalData.map(({path}) => mounted.get(path));
      if (weights.includes(undefined)) throw new Error("Can't create a session. ERROR_CODE: 0, ERROR_MESSAGE: ");
      return {graph, weights};
    } finally {
      mounted = new Map();
    }
  };
  return {InferenceSession: {create}, env: {}};
}

const weights = (data) => ({externalData: [{path: "weights.bin", data}]});

test("sessions asked for at once are made one after another, each with its own weights", async () => {
  const ort = runtime();
  const made = await Promise.all(["a", "b", "c"].map((name) => created(ort, name, weights(name.toUpperCase()))));
  assert.deepEqual(made, [{graph: "a", weights: ["A"]}, {graph: "b", weights: ["B"]}, {graph: "c", weights: ["C"]}]);
});

test("a session that fails says why, and the next is made", async () => {
  const ort = runtime();
  const [broken, next] = await Promise.allSettled([created(ort, "broken", weights("X")), created(ort, "a", weights("A"))]);
  assert.match(broken.reason.message, /Can't create a session/);
  assert.deepEqual(next.value, {graph: "a", weights: ["A"]});
});

test("the runtime, asked at once with no queue, mixes them: what the queue is for", async () => {
  const ort = runtime();
  const settled = await Promise.allSettled(["a", "b"].map((name) => ort.InferenceSession.create(name, weights(name))));
  assert.ok(settled.some((s) => s.status === "rejected" || s.value.weights[0] !== s.value.graph));
});
