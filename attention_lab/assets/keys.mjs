// The keyboard: with no text box focused, ← → move the shown step (→ at the last step decodes the next, as Step
// does, where decoding can go on), Home and End go to the first and last step, ↑ ↓ change the focused head, 1 2 3
// the kind of attention, and ? lists the keys. Typing never moves anything: a key pressed in a text box, a menu or
// a slider is theirs.

import {focusChoices, focusOf} from "./style.mjs";
import {page, setKind, setLook, show, steps} from "./store.mjs";

export const KEYS = [
  ["← →", "the step before, the step after (at the last step, → decodes the next one, as Step)"],
  ["Home End", "the first step (0, before any output), the last"],
  ["↑ ↓", "the focused head before, after (the mean of all heads comes first)"],
  ["1 2 3", "cross-attention, encoder self-attention, decoder self-attention"],
  ["?", "this list"],
];

// The step loop's buttons, by element id: what each does and its key, in its tooltip (the labels stay as they are).
export const BUTTON_HINTS = {
  "lab-run": "Decode to the end",
  "lab-step": "Decode one token more (→ at the last step, with no text box focused)",
  "lab-back": "Take the last token back (← shows the step before without undoing it)",
  "lab-reset": "Start over, from step 0",
};

/** Whether a key pressed on `target` belongs to it (a text box, a menu, a slider, an editable element). */
export function typing(target) {
  if (!target || !target.closest) return false;
  return !!target.closest("input, textarea, select, [contenteditable=''], [contenteditable='true']");
}

/** The focused head after `delta` steps through the choices (the mean, then every head), from `focus`. */
export function nextFocus(focus, delta, layers, heads) {
  const choices = focusChoices(layers, heads, null).map(focusOf);
  const at = Math.max(0, choices.findIndex((f) => JSON.stringify(f) === JSON.stringify(focus)));
  return choices[(at + delta + choices.length) % choices.length];
}

const MOVES = ["ArrowLeft", "Home", "End", "ArrowUp", "ArrowDown"]; // what they move needs a decoding

/** What `key` does to the page (see above); `step()` decodes the next step when the page can. Returns whether the
 * key was the page's. With nothing decoded, ← Home End ↑ ↓ are left to the browser (they scroll); → decodes the
 * first step. */
export function press(key, {step, help}) {
  const n = steps(), d = page.decoding;
  if (MOVES.includes(key) && !d) return false;
  if (key === "ArrowLeft") show(page.shown - 1);
  else if (key === "ArrowRight") {
    if (page.shown < n) show(page.shown + 1);
    else step();
  } else if (key === "Home") show(0);
  else if (key === "End") show(n);
  else if (key === "ArrowUp" || key === "ArrowDown") {
    setLook({focus: nextFocus(page.look.focus, key === "ArrowDown" ? 1 : -1, Math.max(d.Le, d.Ld), d.H)});
  } else if (["1", "2", "3"].includes(key) && page.names) setKind(page.names.order[Number(key) - 1]);
  else if (key === "?") help();
  else return false;
  return true;
}

/** Listen for the keys on `doc`, once. */
export function install(doc, actions) {
  if (doc.__labKeys) return;
  doc.__labKeys = true;
  doc.addEventListener("keydown", (event) => {
    if (event.ctrlKey || event.metaKey || event.altKey || typing(event.target)) return;
    if (press(event.key, actions)) event.preventDefault();
  });
}
