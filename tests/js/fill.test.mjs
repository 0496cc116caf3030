import assert from "node:assert/strict";
import {test} from "node:test";

import {mount} from "../../attention_lab/page/fill.mjs";
import {errors} from "./messages.mjs";

/** The hidden component as gradio hands it over: its value set with `send`, the events it triggers kept. */
function component() {
  const listeners = [], triggered = [];
  const props = {value: null};
  mount({props, watch: (name, fn) => listeners.push(fn), trigger: (name) => triggered.push(name)});
  return {triggered, send: (v) => { props.value = v; listeners.forEach((fn) => fn()); }};
}

test("each ask an answer brings asks the server once for the slow outputs, and nothing else does", () => {
  const c = component();
  const asks = [{op: "ask", n: 1}, {op: "ask", n: 2}];
  asks.forEach((ask) => assert.equal(errors(ask), ""));  // as the schema says the server sends it
  c.send(null);
  c.send({op: "computing", text: "busy"});
  assert.deepEqual(c.triggered, []);
  c.send(asks[0]);
  c.send(asks[1]);
  assert.deepEqual(c.triggered, ["fill", "fill"]);
});

test("where the page makes the open tab itself by the time an ask comes, the server is not asked", () => {
  const c = component();
  globalThis.attentionLabRoad = {makesOpenTab: () => true};
  try {
    c.send({op: "ask", n: 1});
    assert.deepEqual(c.triggered, []);
    globalThis.attentionLabRoad.makesOpenTab = () => false; // the server's road, or a tab the server makes
    c.send({op: "ask", n: 2});
    assert.deepEqual(c.triggered, ["fill"]);
  } finally {
    delete globalThis.attentionLabRoad;
  }
});
