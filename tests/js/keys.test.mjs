import assert from "node:assert/strict";
import {test} from "node:test";

import {nextFocus, press, typing} from "../../attention_lab/assets/keys.mjs";
import {page, receive, setKind, setLook, setNames, show} from "../../attention_lab/assets/store.mjs";
import {NAMES, payload} from "./helpers.mjs";
import {valid} from "./messages.mjs";

setNames(NAMES);

const target = (selector) => ({closest: (s) => (s.split(", ").some((part) => part === selector) ? {} : null)});

test("a key pressed in a text box, a menu, a slider or an editable element is theirs", () => {
  for (const selector of ["input", "textarea", "select", "[contenteditable='true']"]) assert.ok(typing(target(selector)), selector);
  assert.equal(typing(target("button")), false);
  assert.equal(typing(null), false);
});

test("the arrows move the shown step, and → at the last step asks for one more", () => {
  receive(valid({op: "full", key: {serial: 3, version: 1}, shown: 2, data: payload({T: 2})}));
  let stepped = 0, helped = 0;
  const actions = {step: () => stepped++, help: () => helped++};
  assert.ok(press("ArrowLeft", actions));
  assert.equal(page.shown, 1);
  press("ArrowRight", actions);
  press("ArrowRight", actions);
  assert.deepEqual([page.shown, stepped], [2, 1]);
  press("Home", actions);
  assert.equal(page.shown, 0);
  press("End", actions);
  assert.equal(page.shown, 2);
  press("?", actions);
  assert.equal(helped, 1);
  assert.equal(press("a", actions), false); // not the page's
});

test("up and down go through the focused heads, the mean first; 1 2 3 choose the kind", () => {
  setLook({focus: null});
  setKind("cross");
  receive(valid({op: "full", key: {serial: 4, version: 1}, shown: 1, data: payload({L: 2, H: 2})}));
  const actions = {step: () => {}, help: () => {}};
  press("ArrowDown", actions);
  assert.deepEqual(page.look.focus, [0, 0]);
  press("ArrowUp", actions);
  press("ArrowUp", actions);
  assert.deepEqual(page.look.focus, [1, 1]); // from the mean, back round to the last head
  assert.equal(nextFocus([1, 1], 1, 2, 2), null);
  press("2", actions);
  assert.equal(page.kind, "encoder");
  press("3", actions);
  assert.equal(page.kind, "decoder_self");
  show(0);
});

test("with nothing decoded the arrows are the page's to scroll, and → decodes the first step", () => {
  receive(valid({op: "clear", key: null, shown: 0}));
  let stepped = 0;
  const actions = {step: () => stepped++, help: () => {}};
  for (const key of ["ArrowLeft", "Home", "End", "ArrowUp", "ArrowDown"]) assert.equal(press(key, actions), false, key);
  assert.ok(press("ArrowRight", actions));
  assert.equal(stepped, 1);
});
