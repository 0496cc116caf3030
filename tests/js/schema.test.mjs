import assert from "node:assert/strict";
import {test} from "node:test";

import {errors, valid} from "./messages.mjs";
import {NAMES, key, payload} from "./helpers.mjs";

test("the decoding's messages the store's tests make up are the schema's", () => {
  const data = payload({T: 3});
  valid({op: "full", key: key(1, 1), shown: 2, data});
  const out = {labels: "o2", words: "o2", group: 2, special: false};
  valid({op: "step", key: key(1, 2), after: key(1, 1), shown: 3, step: data.steps[2], out, cross_norms: null});
  valid({op: "back", key: key(1, 3), after: key(1, 2), shown: 2, steps: 2});
  valid({op: "show", key: key(1, 3), shown: 1});
  valid({op: "clear", key: null, shown: 0});
  valid(NAMES);
});

test("the schema refuses what the page would misread", () => {
  const data = payload({T: 1});
  assert.notEqual(errors({op: "full", key: "1.1", shown: 1, data}), ""); // a key is {serial, version}, not a string
  assert.notEqual(errors({op: "full", key: key(1, 1), data}), ""); // no step to show
  assert.notEqual(errors({op: "full", key: key(1, 1), shown: 1, data: {...data, layers: [2]}}), "");
  assert.notEqual(errors({op: "show", key: key(1, 1), shown: 1, extra: true}), ""); // a key the page does not know
  assert.notEqual(errors({op: "no such message"}), "");
  assert.notEqual(errors({...NAMES, order: "cross"}), "");
});
