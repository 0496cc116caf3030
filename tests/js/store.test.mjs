import assert from "node:assert/strict";
import {test} from "node:test";

import {page, receive, setKind, setLook, setNames, show, steps, watch} from "../../attention_lab/assets/store.mjs";
import {NAMES, payload} from "./helpers.mjs";
import {valid} from "./messages.mjs";

setNames(NAMES);

test("the page holds what the server's messages bring it to, and leaves a message meant for another decoding", () => {
  const seen = [];
  const stop = watch((what) => seen.push(what));
  receive(valid({op: "full", key: {serial: 1, version: 1}, shown: 2, data: payload({T: 2})}));
  assert.deepEqual([page.key, page.shown, steps()], [{serial: 1, version: 1}, 2, 2]);
  const third = payload({T: 3}).steps[2];
  receive(valid({op: "step", key: {serial: 1, version: 2}, after: {serial: 1, version: 0}, shown: 3, step: third, out: {labels: "o2", words: "o2", group: 2, special: false}, cross_norms: null}));
  assert.equal(steps(), 2); // after another decoding than the page holds: left
  receive(valid({op: "step", key: {serial: 1, version: 2}, after: {serial: 1, version: 1}, shown: 3, step: third, out: {labels: "o2", words: "o2", group: 2, special: false}, cross_norms: null}));
  assert.deepEqual([page.key, page.shown, steps(), page.decoding.out.labels[2]], [{serial: 1, version: 2}, 3, 3, "o2"]);
  receive(valid({op: "back", key: {serial: 1, version: 3}, after: {serial: 1, version: 2}, shown: 2, steps: 2}));
  assert.deepEqual([page.key, steps()], [{serial: 1, version: 3}, 2]);
  receive(valid({op: "show", key: {serial: 1, version: 3}, shown: 1}));
  assert.equal(page.shown, 1);
  receive(valid({op: "show", key: {serial: 9, version: 9}, shown: 0}));
  assert.equal(page.shown, 1);
  receive(valid({op: "clear", key: null, shown: 0}));
  assert.deepEqual([page.decoding, steps(), page.fullKey], [null, 0, null]);
  assert.deepEqual(seen, ["decoding", "decoding", "decoding", "shown", "decoding"]);
  stop();
});

test("the page knows the highest serial of every decoding it held, a cleared one's too (its own are numbered past it)", () => {
  receive(valid({op: "full", key: {serial: 7, version: 2}, shown: 0, data: payload({T: 2})}));
  receive(valid({op: "clear", key: null, shown: 0, after: {serial: 8, version: 1}}));
  assert.deepEqual([page.key, page.serial], [null, 8]);
  receive(valid({op: "full", key: {serial: 3, version: 1}, shown: 0, data: payload({T: 2})}));
  assert.equal(page.serial, 8);
});

test("the shown step stays between 0 and the last; kind and look change only when asked for another", () => {
  receive(valid({op: "full", key: {serial: 2, version: 1}, shown: 0, data: payload({T: 3})}));
  setKind("cross"); // the page as it opens, whatever a test before this one (in this process) left
  setLook({words: true});
  let changes = page.changes;
  show(7);
  assert.equal(page.shown, 3);
  show(-2);
  assert.equal(page.shown, 0);
  show(0);
  setKind("cross");
  setKind("nonsense");
  setLook({words: true});
  assert.equal(page.changes, changes + 2); // the two moves, nothing else
  changes = page.changes;
  setKind("encoder");
  setLook({focus: [1, 0]});
  assert.deepEqual([page.kind, page.look.focus, page.changes], ["encoder", [1, 0], changes + 2]);
});

test("a step's answer that comes before the one it follows waits for it", () => {
  receive(valid({op: "full", key: {serial: 6, version: 1}, shown: 1, data: payload({T: 1})}));
  const [, second, third] = payload({T: 3}).steps;
  const out = (t) => ({labels: `o${t}`, words: `o${t}`, group: t, special: false});
  receive(valid({op: "step", key: {serial: 6, version: 3}, after: {serial: 6, version: 2}, shown: 3, step: third, out: out(2), cross_norms: null})); // the later click's answer first
  assert.deepEqual([page.key, steps()], [{serial: 6, version: 1}, 1]);
  receive(valid({op: "step", key: {serial: 6, version: 2}, after: {serial: 6, version: 1}, shown: 2, step: second, out: out(1), cross_norms: null}));
  assert.deepEqual([page.key, steps(), page.shown, page.decoding.out.labels], [{serial: 6, version: 3}, 3, 3, ["o0", "o1", "o2"]]);
  receive(valid({op: "step", key: {serial: 6, version: 9}, after: {serial: 6, version: 8}, shown: 9, step: third, out: out(8), cross_norms: null})); // follows nothing the page gets
  receive(valid({op: "full", key: {serial: 7, version: 1}, shown: 1, data: payload({T: 1})})); // a whole decoding: what waited is dropped
  receive(valid({op: "full", key: {serial: 6, version: 8}, shown: 1, data: payload({T: 1})}));
  assert.deepEqual([page.key, steps()], [{serial: 6, version: 8}, 1]);
});
