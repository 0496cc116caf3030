// The page's state: the decoding it holds, the step it shows, the kind of attention in view, how it looks at the
// weights, and the names the server gives the kinds and the looks. Every view draws from here and redraws when it
// changes (watch); only the server's messages (attention_lab/decoding/messages.py) change the decoding and the names,
// and only the reader changes the rest, with no request. Every message's shape is the checked-in JSON Schema's
// (attention_lab/assets/messages.schema.json).
//
// A message brings the page from what it holds to the user's run: the whole decoding ("full"), a step more ("step")
// or fewer ("back") for a page that holds the decoding `after`, another step shown ("show"), or none ("clear"). A
// decoding's key is {serial, version}: the run's number in the user's session, and how many times it changed.

import {Decoding} from "./decoding.mjs";

export const page = {
  decoding: null,
  key: null, // the decoding the page holds
  serial: 0, // the highest serial of a decoding the page has held: its own next decoding is numbered past it
  fullKey: null, // the last whole decoding received: what followed it was only steps more or fewer
  shown: 0, // 0: before any output
  kind: "cross",
  look: {words: true, hideSpecials: false, scale: "linear", focus: null, reading: "weights"},
  names: null, // what the kinds, the readings, the scales and the mean of all heads are called (the server's Names)
  changes: 0, // how many times the state changed (tests read it)
};
globalThis.attentionLab = page; // for a person at the console, the tests and the benchmarks

const watchers = new Set();

/** Call `fn(what)` whenever the state changes ("decoding", "shown", "kind", "look" or "names"); returns how to stop.
 * `first`: before the watchers there already. A view drawn by plotly, which reads the page's layout as it draws, goes
 * first: the others' writes would make each of its reads lay the page out again (5 ms of a Step's 35). */
export function watch(fn, first = false) {
  if (first) {
    const others = [...watchers];
    watchers.clear();
    for (const f of [fn, ...others]) watchers.add(f);
  } else watchers.add(fn);
  return () => watchers.delete(fn);
}

function changed(what) {
  page.changes++;
  for (const fn of watchers) fn(what);
}

export function steps() {
  return page.decoding ? page.decoding.steps.length : 0;
}

// Step and back messages that came before the one they follow (two quick clicks' answers can cross on the way), by
// the decoding they follow: each is taken as soon as the page holds that one.
const waiting = new Map(); // by the decoding they follow (its key's serial and version, as a Map's key)
const WAITING_AT_MOST = 8;
const slot = (key) => (key ? `${key.serial} ${key.version}` : "");

/** Whether two keys name the same decoding (null: none). */
export function sameKey(a, b) {
  return a === b || (!!a && !!b && a.serial === b.serial && a.version === b.version);
}

/** A message from the server (see above); one not meant for what the page holds is left, or kept until it is. */
export function receive(message) {
  if (!message || !message.op) return;
  if (!apply(message)) {
    const follows = message.op === "step" || message.op === "back";
    if (follows && waiting.size < WAITING_AT_MOST) waiting.set(slot(message.after), message);
    return;
  }
  if (message.op === "full" || message.op === "clear") waiting.clear();
  for (let next = waiting.get(slot(page.key)); next; next = waiting.get(slot(page.key))) {
    waiting.delete(slot(page.key));
    apply(next);
  }
}

/** Bring the page to `message` if it follows what the page holds; whether it did. */
function apply(message) {
  const d = page.decoding;
  if (message.op === "full") page.decoding = new Decoding(message.data);
  else if (message.op === "clear") page.decoding = null;
  else if (message.op === "step" && d && sameKey(page.key, message.after)) d.addStep(message);
  else if (message.op === "back" && d && sameKey(page.key, message.after)) d.keep(message.steps);
  else if (message.op !== "show" || !sameKey(page.key, message.key)) return false;
  if (message.op === "full" || message.op === "clear") page.fullKey = message.key;
  page.key = message.key;
  for (const k of [message.key, message.after]) if (k) page.serial = Math.max(page.serial, k.serial);
  const same = message.op === "show";
  if (same && page.shown === message.shown) return true;
  page.shown = message.shown;
  changed(same ? "shown" : "decoding");
  return true;
}

/** Show step `step` (0 to the last), if it is another. */
export function show(step) {
  const wanted = Math.max(0, Math.min(Number(step) || 0, steps()));
  if (wanted === page.shown) return;
  page.shown = wanted;
  changed("shown");
}

/** The server's names of the kinds and the looks (its Names message): sent once, as the page opens. */
export function setNames(names) {
  if (!names || names.op !== "names") return;
  page.names = names;
  changed("names");
}

export function setKind(kind) {
  if (!page.names || !page.names.order.includes(kind) || kind === page.kind) return;
  page.kind = kind;
  changed("kind");
}

/** Change how the weights look: any of words, hideSpecials, scale, focus ([layer, head] or null), reading. */
export function setLook(partial) {
  if (Object.entries(partial).every(([name, value]) => JSON.stringify(page.look[name]) === JSON.stringify(value))) return;
  Object.assign(page.look, partial);
  changed("look");
}
