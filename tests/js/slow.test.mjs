import assert from "node:assert/strict";
import {test} from "node:test";

import {onClick} from "../../attention_lab/assets/plot.mjs";
import {slowView} from "../../attention_lab/assets/slow.mjs";
import {madeHere} from "../../attention_lab/assets/here.mjs";
import {page, setKind, setLook, setNames} from "../../attention_lab/assets/store.mjs";
import {NAMES} from "./helpers.mjs";

setNames(NAMES);

const seen = []; // the callbacks of the elements watched for coming into view
globalThis.ResizeObserver = class {
  constructor(fn) { this.fn = fn; }
  observe() { seen.push(this.fn); }
};

/** A component as gradio hands it over (its value set with `send`), and a box shown or hidden as `box.shown` says. */
function component(value = null) {
  const listeners = [];
  const props = {value};
  const box = {clientWidth: 300, get offsetParent() { return this.shown ? {} : null; }, shown: true,
    getBoundingClientRect: () => ({top: 0, left: 0, width: 300, height: 100})};
  return {props, box, watch: (name, fn) => listeners.push(fn), send: (v) => { props.value = v; listeners.forEach((fn) => fn()); }};
}

test("a placeholder keeps the last message until the next one; null clears both; each value redraws", () => {
  const c = component({op: "x", n: 1}), drawn = [];
  const view = slowView(c, c.box, ({message, computing}) => drawn.push([message && message.n, computing]));
  c.send({op: "computing", text: "busy"});
  c.send({op: "x", n: 2});
  c.send(null);
  assert.deepEqual(drawn, [[1, ""], [1, "busy"], [2, ""], [null, ""]]);
  assert.equal(view.message, null);
});

test("take makes the message kept from the value and the one before it", () => {
  const c = component(), taken = [];
  const view = slowView(c, c.box, () => {}, {take: (value, last) => { taken.push([value.n, last && last.n]); return {n: 10 * value.n}; }});
  c.send({op: "x", n: 1});
  c.send({op: "computing", text: "busy"});
  c.send({op: "x", n: 2});
  assert.deepEqual(taken, [[1, null], [2, 10]]);
  assert.equal(view.message.n, 20);
});

test("drawn only while shown, and again when it comes into view", () => {
  const c = component({op: "x", n: 1});
  let drawn = 0;
  c.box.shown = false;
  const view = slowView(c, c.box, () => drawn++);
  c.send({op: "x", n: 2});
  assert.equal(drawn, 0);
  assert.equal(view.message.n, 2); // kept meanwhile
  c.box.shown = true;
  seen[seen.length - 1]();
  assert.equal(drawn, 1);
});

test("the page's changes redraw it as `on` says: by default all but another kind", () => {
  const c = component(), d = component(), counts = {all: 0, look: 0};
  slowView(c, c.box, () => counts.all++);
  slowView(d, d.box, () => counts.look++, {on: (what) => what === "kind"});
  setKind("encoder");
  setLook({words: false});
  assert.deepEqual(counts, {all: 2, look: 2}); // each drawn once as it mounted, then once more
  setKind("cross");
});

test("later: drawn after what else the same answer updates", async () => {
  const c = component({op: "x"});
  let drawn = 0;
  slowView(c, c.box, () => drawn++, {later: true});
  assert.equal(drawn, 0);
  await new Promise((done) => setTimeout(done, 0));
  assert.equal(drawn, 1);
});

test("a figure's clicks are bound once however often it is drawn, and give their first point", () => {
  const handlers = [], points = [];
  const gd = {on: (name, fn) => handlers.push([name, fn])};
  onClick(gd, (point) => points.push(point.x));
  onClick(gd, (point) => points.push(-point.x));
  onClick(null, () => points.push("none"));
  assert.deepEqual(handlers.map(([name]) => name), ["plotly_click"]);
  handlers[0][1]({points: [{x: 3}, {x: 4}]});
  handlers[0][1]({points: []});
  assert.deepEqual(points, [3]);
});

test("a message the page made is not replaced by the server's late answer for an earlier decoding", () => {
  const c = component(), drawn = [];
  slowView(c, c.box, ({message}) => drawn.push(message && message.n), {here: "late-test"});
  c.send({op: "computing", text: "busy"}); // the tab opened on the server's decoding {serial: 0}
  page.key = {serial: 1, version: 2}; // then a Run in the page
  madeHere("late-test", {op: "x", n: 1, key: {serial: 1, version: 2}});
  c.send({op: "x", n: 0, key: {serial: 0, version: 1}}); // the server's answer for what it held as the tab opened
  c.send({op: "x", n: 2, key: {serial: 1, version: 2}}); // one for the page's decoding is taken
  assert.deepEqual(drawn, [null, null, 1, 1, 2]);
  page.key = null;
});
