// The page's state: the decoding it holds, the step it shows, the kind of attention in view and how it looks at the
// weights. Every view draws from here and redraws when it changes (watch); only the server's messages
// (attention_lab/decoding/messages.py) change the decoding, and only the reader changes the rest, with no request.
//
// A message brings the page from what it holds to the user's run: the whole decoding ("full"), a step more ("step")
// or fewer ("back") for a page that holds the decoding `after`, another step shown ("show"), or none ("clear").

import {Decoding} from "./decoding.mjs";
import {PAGE_ORDER} from "./look.mjs";

export const page = {
  decoding: null,
  key: "", // the decoding the page holds
  fullKey: "", // the last whole decoding received: what followed it was only steps more or fewer
  shown: 0, // 0: before any output
  kind: "cross",
  look: {words: true, hideSpecials: false, scale: "linear", focus: null, reading: "weights"},
  changes: 0, // how many times the state changed (tests read it)
};
globalThis.attentionLab = page; // for a person at the console, the tests and the benchmarks

const watchers = new Set();

/** Call `fn(what)` whenever the state changes ("decoding", "shown", "kind" or "look"); returns how to stop. */
export function watch(fn) {
  watchers.add(fn);
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
const waiting = new Map();
const WAITING_AT_MOST = 8;

/** A message from the server (see above); one not meant for what the page holds is left, or kept until it is. */
export function receive(message) {
  if (!message || !message.op) return;
  if (!apply(message)) {
    const follows = message.op === "step" || message.op === "back";
    if (follows && waiting.size < WAITING_AT_MOST) waiting.set(message.after, message);
    return;
  }
  if (message.op === "full" || message.op === "clear") waiting.clear();
  for (let next = waiting.get(page.key); next; next = waiting.get(page.key)) {
    waiting.delete(page.key);
    apply(next);
  }
}

/** Bring the page to `message` if it follows what the page holds; whether it did. */
function apply(message) {
  const d = page.decoding;
  if (message.op === "full") page.decoding = new Decoding(message.data);
  else if (message.op === "clear") page.decoding = null;
  else if (message.op === "step" && d && page.key === message.after) d.addStep(message);
  else if (message.op === "back" && d && page.key === message.after) d.keep(message.steps);
  else if (message.op !== "show" || page.key !== message.key) return false;
  if (message.op === "full" || message.op === "clear") page.fullKey = message.key;
  page.key = message.key;
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

export function setKind(kind) {
  if (!PAGE_ORDER.includes(kind) || kind === page.kind) return;
  page.kind = kind;
  changed("kind");
}

/** Change how the weights look: any of words, hideSpecials, scale, focus ([layer, head] or null), reading. */
export function setLook(partial) {
  if (Object.entries(partial).every(([name, value]) => JSON.stringify(page.look[name]) === JSON.stringify(value))) return;
  Object.assign(page.look, partial);
  changed("look");
}
