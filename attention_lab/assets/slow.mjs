// A view filled after its tab opens (a slow output, attention_lab/page/render.py): the click answers with a
// placeholder, {op: "computing", text}, and the event chained after it sends the message itself; null clears both.
// The view keeps the last message and the placeholder's text, and draws them when a value arrives, when the page's
// state changes and when it comes into view, only while it is shown (a hidden figure has no width to draw at).

import {onVisible, shown} from "./dom.mjs";
import {watch} from "./store.mjs";

/** Mount a slow output's view on `box` (the element it draws into) for the component's `props` and `watch`.
 * `draw(view)` draws `view.message` (the last message kept, or null) and `view.computing` (the placeholder's text,
 * "" when none is waiting); options:
 *   take(value, last): the message kept for the server's `value` (the value itself by default); a view resets its
 *     own state here;
 *   on(what): whether a change of the page's state ("decoding", "shown", "kind", "look") redraws it (all but "kind");
 *   seen: the element whose coming into view redraws it (`box`);
 *   later: draw after gradio's own updates of the same answer, not at once (a large figure takes a moment).
 * Returns the view, {message, computing, redraw}, for the module's own events. */
export function slowView({props, watch: watchValue}, box, draw, options = {}) {
  const {take = (value) => value, on = (what) => what !== "kind", seen = box, later = false} = options;
  const view = {message: null, computing: "", redraw: () => (shown(box) ? draw(view) : null)};
  const receive = () => {
    const value = props.value;
    if (!value) [view.message, view.computing] = [null, ""];
    else if (value.op === "computing") view.computing = value.text;
    else [view.message, view.computing] = [take(value, view.message), ""];
    if (later) setTimeout(view.redraw, 0);
    else view.redraw();
  };
  watchValue("value", receive);
  watch((what) => (on(what) ? view.redraw() : null));
  onVisible(seen, view.redraw);
  receive();
  return view;
}
