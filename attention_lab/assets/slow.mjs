// A view filled after its tab opens (a slow output, attention_lab/page/render.py): the click answers with a
// placeholder, {op: "computing", text}, and the message itself follows (on the answer's stream, or the fill the
// page asks for: page/fill.mjs); null clears both.
// The view keeps the last message and the placeholder's text, and draws them when a value arrives and when the page's
// state changes, only while it is shown (a hidden figure has no width to draw at); coming into view, it is drawn
// again only if something changed while it was hidden, or its width did (what it drew is still there).

import {onVisible, shown} from "./dom.mjs";
import {computedHere, onMadeHere} from "./here.mjs";
import {page, sameKey, watch} from "./store.mjs";

/** Whether two JSON values are equal, whatever the order of their keys. */
export function equal(a, b) {
  if (a === b) return true;
  if (typeof a !== "object" || typeof b !== "object" || !a || !b || Array.isArray(a) !== Array.isArray(b)) return false;
  const keys = Object.keys(a);
  return keys.length === Object.keys(b).length && keys.every((key) => equal(a[key], b[key]));
}

/** Whether a slow view's message, made from the tokens `message.tokens` of the run `message.key`, was made from the
 * page's decoding `d` (the run `key`): the same run and the same first `upTo` tokens; with `upTo` null, all of them
 * and no more (a view of the whole decoding). */
export function madeFrom(message, d, key, upTo = null) {
  if (!d || !message || !key || !message.key || message.key.serial !== key.serial) return false;
  const n = upTo === null ? d.steps.length : upTo;
  if (message.tokens.length < n || (upTo === null && message.tokens.length !== n)) return false;
  return d.steps.slice(0, n).every((step, i) => step.token === message.tokens[i]);
}

/** Whether run key `a` came before run key `b` (the page numbers its decodings past every key the server sent). */
function before(a, b) {
  return a.serial < b.serial || (a.serial === b.serial && a.version < b.version);
}

/** Whether the server's `value` is a late answer for a decoding before the one the view's message was made for, the
 * decoding the page holds (a tab opened before a Run in the page: the server's answer for what it held then). */
function late(value, message) {
  return !!value.key && !!message && !!message.key && sameKey(message.key, page.key) && before(value.key, message.key);
}

/** Mount a slow output's view on `box` (the element it draws into) for the component's `props` and `watch`.
 * `draw(view)` draws `view.message` (the last message kept, or null) and `view.computing` (the placeholder's text,
 * "" when none is waiting); options:
 *   take(value, last): the message kept for the server's `value` (the value itself by default); a view resets its
 *     own state here;
 *   on(what): whether a change of the page's state ("decoding", "shown", "kind", "look") redraws it (all but "kind");
 *   seen: the element whose coming into view redraws it (`box`);
 *   later: draw after gradio's own updates of the same answer, not at once (a large figure takes a moment);
 *   here: the tab's id, when the page can make its message itself (assets/here.mjs): what it makes is taken as the
 *     server's is, and a late server answer for an earlier decoding does not replace it.
 * Returns the view, {message, computing, redraw}, for the module's own events. */
export function slowView({props, watch: watchValue}, box, draw, options = {}) {
  const {take = (value) => value, on = (what) => what !== "kind", seen = box, later = false, here = null} = options;
  let missed = true, width = -1; // whether a draw was skipped while hidden; the width it was last drawn at
  const redraw = () => {
    missed = !shown(box);
    if (missed) return;
    width = box.clientWidth;
    draw(view);
  };
  const view = {message: null, computing: "", redraw};
  let last = null; // the value last taken: the same value sent again (an answer's stream, then its end) is not redrawn
  let taken = 0; // how many messages were taken: a redraw put off for a new decoding is left if one came meanwhile
  const receive = () => {
    const value = props.value, same = !!value && equal(value, last);
    last = value;
    if (same) return;
    taken++;
    if (!value) [view.message, view.computing] = [null, ""];
    else if (value.op === "computing") view.computing = value.text;
    else if (here && late(value, view.message)) view.computing = "";
    else [view.message, view.computing] = [take(value, view.message), ""];
    if (later) setTimeout(view.redraw, 0);
    else view.redraw();
  };
  watchValue("value", receive);
  watch((what) => {
    if (!on(what)) return;
    if (what !== "decoding" || !here || !computedHere(here)) return view.redraw();
    // the page makes this tab's message for the new decoding, most often made ahead and handed over before the next
    // task: drawn then, once, not first from the message before it (which cleared and made again a view's figures)
    const seen = taken;
    setTimeout(() => (taken === seen ? view.redraw() : null), 0);
  });
  onVisible(seen, () => (missed || box.clientWidth !== width ? redraw() : null));
  receive();
  if (here) { // after the server's first value: a message the page made before the view mounted is taken over it
    onMadeHere(here, (message) => {
      taken++;
      [view.message, view.computing] = [take(message, view.message), ""];
      view.redraw();
    });
  }
  return view;
}
