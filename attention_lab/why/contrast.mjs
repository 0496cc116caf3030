// Why this token and not that one: a candidate's "why not this?" (decoding/candidates.mjs) asks the server for the
// attribution of logit(token written) − logit(candidate) at the shown step (attention_lab/why/contrasting.py); it is
// drawn here, at the top of the Why tab: the source words and the prefix shaded by it, the logit difference, and a
// way back to the plain attribution below. Redraws (Show step, words, specials) are the page's own.

import {el, root} from "../assets/dom.mjs";
import {shade} from "../assets/plot.mjs";
import {slowView} from "../assets/slow.mjs";
import {page} from "../assets/store.mjs";
import {stepRow} from "../assets/units.mjs";
import {WHY_NOT_EVENT} from "../decoding/candidates.mjs";
import {shadedWords} from "../decoding/looked_at.mjs";
import {summed} from "./why.mjs";

export const BACK = "Back to the attribution";

/** What the contrast view draws from the page's decoding and the server's `message` at step `shownStep`: null when
 * there is nothing to draw there (another step shown, or the decoding no longer wrote what was asked about). */
export function contrastState(decoding, message, shownStep, look) {
  if (!decoding || !message || message.op !== "contrast" || message.step !== shownStep) return null;
  const step = decoding.steps[message.step - 1];
  if (!step || message.tokens.some((t, i) => !decoding.steps[i] || decoding.steps[i].token !== t)) return null;
  const state = {step: message.step, token: step.label, alternative: message.alternative};
  if (message.error) return {...state, error: message.error};
  const cross = stepRow(decoding, "cross", message.step, look), self = stepRow(decoding, "decoder_self", message.step, look);
  const source = summed(message.source, cross.groups), prefix = summed(message.prefix, self.groups);
  const top = Math.max(1e-12, ...source.map(Math.abs), ...prefix.map(Math.abs));
  const unitsOf = (labels, values) => labels.map((label, i) => ({label, value: values[i], shade: values[i] / top}));
  return {...state, difference: message.difference, title: message.title, aggregate: message.aggregate,
    notes: message.notes, source: unitsOf(cross.labels, source), prefix: unitsOf(self.labels, prefix)};
}

/** The heading's text: Why “a” and not “b”? */
export function contrastTitle(state) {
  return `Why “${state.token}” and not “${state.alternative}”?`;
}

/** The contrast's words and lines into `container`; `back` is called by its way back to the plain attribution. */
export function renderContrast(container, state, back) {
  const view = el("div", "why-contrast-view");
  container.replaceChildren(view);
  const heading = el("div", "why-contrast-heading");
  heading.append(el("b", "", contrastTitle(state)), ` Step ${state.step}`);
  const close = el("button", "why-contrast-back", BACK);
  close.type = "button";
  close.addEventListener("click", back);
  const top = el("div", "why-contrast-top");
  top.append(heading, close);
  view.append(top);
  if (state.error) {
    view.append(el("div", "why-note", state.error));
    return;
  }
  const value = (w) => `${state.title}: ${w.value.toFixed(4)}`;
  const row = (label, words) => {
    const line = el("div", "why-row");
    line.append(el("div", "why-label", label), shadedWords(words, (w) => shade(w.shade, true), value));
    return line;
  };
  const [a, b] = [`“${state.token}”`, `“${state.alternative}”`];
  const signed = state.aggregate === "sum"
    ? `blue pushed the model towards ${a}, red towards ${b}`
    : "darker mattered more to the difference, whichever way (L2 has no sign)";
  const lines = `logit ${a} − logit ${b} = ${state.difference.toFixed(3)}: what is attributed here, by `
    + `${state.title.toLowerCase()}; ${signed}.`;
  view.append(el("div", "why-note", lines), row(`Source words, by ${state.title.toLowerCase()}`, state.source),
    row(`Prefix, by ${state.title.toLowerCase()}`, state.prefix), el("div", "why-note", state.notes.aggregate));
}

export function mount(component) {
  const box = root(component.element);
  let closed = false, wanted = null; // wanted: the last asked, {step, token}
  let reveal = false; // scrolled into view once drawn after a click (at a phone's width the tab is far below)
  const view = slowView(component, box, ({message, computing, redraw}) => {
    const current = !wanted || (message && message.step === wanted.step && message.token_id === wanted.token);
    const state = closed || !current ? null : contrastState(page.decoding, message, page.shown, page.look);
    if (state) {
      renderContrast(box, state, () => { closed = true; redraw(); });
      if (reveal) [reveal] = [false, box.scrollIntoView({block: "nearest"})];
    } else if (computing && !closed) box.replaceChildren(el("div", "why-busy", computing));
    else box.replaceChildren();
  }, {take: (value) => { closed = false; return value; }});
  // asked (again): drawn again, and a contrast asked about something else is not drawn meanwhile
  document.addEventListener(WHY_NOT_EVENT, (event) => { [closed, wanted, reveal] = [false, event.detail, true]; view.redraw(); });
}
