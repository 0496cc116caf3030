// What the model looked at: the shown step's cross-attention over the source words, each shaded by its weight (the
// focused head, or the mean of all heads). A click on a word asks the server to point the heads chosen in the Heads
// tab at it at this step (the attention edit).

import {el, root} from "../assets/dom.mjs";
import {page, watch} from "../assets/store.mjs";
import {head, scaled, stepRow, unit} from "../assets/units.mjs";
import {shade} from "../assets/plot.mjs";

/** The shown step's cross-attention over the source words, as plain data: what it wrote, the words and weights. */
export function now(decoding, shown, look) {
  if (!shown) return {empty: true};
  const step = decoding.steps[shown - 1];
  const row = stepRow(decoding, "cross", shown, look);
  const chosen = head(row.stack, look.focus, false);
  const shades = scaled(chosen.z, 1, row.stack.K, look.scale);
  const words = row.labels.map((label, i) => ({label, weight: chosen.z[i], shade: unit(shades[i], look.scale),
    pieces: row.groups[i]}));
  return {empty: false, step: shown, token: step.label, forced: step.forced, name: chosen.name, words,
    hidden: look.hideSpecials};
}

/** Words shaded by weight (`shadeOf(word)`: its shade()), each titled with its weight; `extra(word, span)` may add
 * to each. */
export function shadedWords(words, shadeOf, titleOf, extra = null) {
  const list = el("div", "words");
  words.forEach((w, i) => {
    if (i) list.append(" ");
    const span = el("span", "word shaded", w.label), {strength, negative, deep} = shadeOf(w);
    span.classList.toggle("negative", negative);
    span.classList.toggle("deep", deep);
    span.style.setProperty("--shade", strength);
    span.title = titleOf(w);
    if (extra) extra(w, span);
    list.appendChild(span);
  });
  return list;
}

export function renderNow(container, state) {
  const view = el("div", "now-view");
  container.replaceChildren(view);
  if (state.empty) {
    view.append("Step 0: nothing written yet. ", el("b", "", "Step"), " writes the first token.");
    return;
  }
  const heading = el("div", "now-heading");
  heading.append(`Step ${state.step} wrote `, el("b", "", state.token || "∅"),
    `${state.forced ? " (forced by a what-if)" : ""}, looking at the source like this (${state.name}):`);
  const words = shadedWords(state.words, (w) => shade(Math.max(0, Math.min(1, w.shade))),
    (w) => `weight ${w.weight.toFixed(3)}; click: point the heads chosen in the Heads tab at it`,
    (w, span) => { span.dataset.pieces = w.pieces.join(","); });
  const note = el("div", "now-note", "Darker words got more attention; hover a word for its weight."
    + (state.hidden ? " Special tokens hidden, weights renormalised." : ""));
  view.append(heading, words, note);
}

export function mount({element, trigger}) {
  const box = root(element);
  const body = el("div", "lab-now");
  box.replaceChildren(el("div", "lab-label", "What the model looked at"), body);
  const draw = () => (page.decoding ? renderNow(body, now(page.decoding, page.shown, page.look)) : body.replaceChildren());
  box.addEventListener("click", (event) => {
    const word = event.target.closest(".word[data-pieces]");
    if (word) trigger("select", {pieces: word.dataset.pieces, shown: page.shown});
  });
  watch((what) => (what !== "kind" ? draw() : null));
  draw();
}
