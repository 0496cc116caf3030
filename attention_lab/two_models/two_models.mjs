// The Two models tab: the page's decoding (model A) beside a second model's (model B), word by word. Each side's
// output is a row of words, the shown word marked; under them, the shown word's cross-attention over the source's
// words in each model, A's bars to the left of the source words and B's to the right, for the head chosen on each
// side (A's follows the page's Focus head). Show step and the keys move A, and B follows by the rule in pair.mjs; a
// click on a word of either output shows it. Hovering a source word's row marks it in both. Nothing here asks the
// server: the message holds every head's rows.

import {el, labelled, root, select} from "../assets/dom.mjs";
import {askAgain, computesHere, textsOf} from "../assets/here.mjs";
import {axisLabels, escapeToken, labelPx} from "../assets/labels.mjs";
import {draw, emptyFigure} from "../assets/plot.mjs";
import {slowView} from "../assets/slow.mjs";
import {page, setLook, show} from "../assets/store.mjs";
import {A, B, RULE, choiceOf, headChoices, focusOfChoice, follow, pairUsable, rowOf, stepOfWord, pairSummary,
  unpacked, wordAtStep} from "./pair.mjs";
import {made, twoModelsAsked, twoModelsNow} from "./in_page.mjs";

// made here while side B is a model whose page copy the page can load, writing its own output (in_page.mjs)
computesHere("two_models", (model, run) => made(model, run, run.asked ?? twoModelsAsked()),
  (model) => twoModelsNow(model), twoModelsAsked);
// side B or what it writes chosen: made again, here or by the server, once gradio has set the menu's value (a
// moment after the click or key that chose it, later on a loaded page: looked for until CHOSEN_MS)
const CHOSEN_MS = 2000, LOOK_MS = 50;
let askedLast = null, looking = null; // what the tab was last asked for (the controls as they start: no side B)
function askWhenChosen() {
  askedLast ??= JSON.stringify({second: "", writes: textsOf("two_models").own});
  clearInterval(looking);
  const started = Date.now();
  looking = setInterval(() => {
    const now = JSON.stringify(twoModelsAsked());
    if (now !== askedLast) { // chosen: asked again once
      clearInterval(looking);
      askedLast = now;
      askAgain("two_models");
    } else if (Date.now() - started >= CHOSEN_MS) clearInterval(looking); // the menu only opened, or the same chosen
  }, LOOK_MS);
}
for (const type of ["change", "click", "keydown"]) {
  globalThis.document?.addEventListener(type, (event) => {
    if (event.target.closest?.("#two-models-second, #two-models-writes")) askWhenChosen();
  });
}

export const SIDE_COLOURS = ["#2171b5", "#e08214"]; // A, B
const ROW_PX = 24, NAMES = ["A", "B"];

/** What each side shows: {words: [A's, B's] (an index or null), shared (whether the outputs share it), from (the
 * side the reader moved)}, from the page's step or a word the reader clicked in B. */
export function shownWords(message, shown, picked) {
  if (picked) {
    const other = follow(message, picked.side, picked.word);
    const words = picked.side === A ? [picked.word, other.word] : [other.word, picked.word];
    return {words, shared: other.shared, from: picked.side};
  }
  const a = wordAtStep(message.models[A], shown), other = follow(message, A, a);
  return {words: [a, other.word], shared: other.shared, from: A};
}

/** A panel's title: the side and its shown word (its model and head are named above the figure). */
function title(message, side, word) {
  return `${NAMES[side]} · ${word === null ? "no word here" : `“${escapeToken(message.models[side].words[word])}”`}`;
}

/** The plotly figure: the shown word's row of each side over the source words (`rows[side]`: V numbers, or null
 * where the side shows no word), A's bars to the left of the source words and B's to the right, on one scale. */
export function pairFigure(message, words, rows, width = 800) {
  const V = message.source_words.length, labels = axisLabels(message.source_words), y = labels.map((_, i) => i);
  const most = Math.max(1e-6, ...rows.flatMap((row) => row || []));
  const gap = Math.min(0.45, (labelPx(labels) + 14) / Math.max(width - 20, 1));
  const domains = [[0, (1 - gap) / 2], [(1 + gap) / 2, 1]];
  const data = rows.map((row, side) => ({type: "bar", orientation: "h", x: row || y.map(() => 0), y,
    xaxis: side === A ? "x" : "x2", yaxis: side === A ? "y" : "y2", marker: {color: SIDE_COLOURS[side]},
    hovertemplate: `${NAMES[side]}: %{x:.3f}<extra>%{customdata}</extra>`,
    customdata: message.source_words.map((w) => `“${escapeToken(w)}”`), showlegend: false}));
  const axis = (side) => ({domain: domains[side], range: side === A ? [most * 1.05, 0] : [0, most * 1.05],
    fixedrange: true, zeroline: true, showgrid: true, gridcolor: "#f0f0f0", tickformat: ".2f", nticks: 4});
  const annotations = [A, B].map((side) => ({text: title(message, side, words[side]), showarrow: false,
    xref: "paper", yref: "paper", x: side === A ? 0 : 1, xanchor: side === A ? "left" : "right", y: 1, yanchor: "bottom",
    align: side === A ? "left" : "right", font: {size: 12, color: SIDE_COLOURS[side]}}));
  return {data, layout: {height: V * ROW_PX + 110, bargap: 0.25, hovermode: "y", dragmode: false,
    plot_bgcolor: "white", margin: {l: 8, r: 8, t: 30, b: 30}, annotations,
    xaxis: axis(A), xaxis2: {...axis(B), anchor: "y2"},
    yaxis: {range: [V - 0.5, -0.5], showticklabels: false, fixedrange: true, zeroline: false},
    yaxis2: {matches: "y", anchor: "x2", tickvals: y, ticktext: labels, fixedrange: true, zeroline: false,
      tickfont: {size: width < 600 ? 10 : 12}}}};
}

/** The band that marks source word `v` in both panels. */
export function band(v) {
  return {type: "rect", xref: "paper", x0: 0, x1: 1, yref: "y", y0: v - 0.5, y1: v + 0.5, layer: "below",
    fillcolor: "#fff3b0", line: {width: 0}};
}

const marked = new WeakSet(); // figures whose hovers are taken (a redraw keeps the figure and its listeners)

function markOnHover(gd) {
  if (!gd || marked.has(gd)) return;
  marked.add(gd);
  gd.on("plotly_hover", (event) => {
    const point = event.points && event.points[0];
    if (point) globalThis.Plotly.relayout(gd, {shapes: [band(point.y)]});
  });
  gd.on("plotly_unhover", () => globalThis.Plotly.relayout(gd, {shapes: []}));
}

function wordsOf(message, side, shownWord, sharedIndex, pick) {
  const row = el("div", "two-models-words");
  const model = message.models[side];
  model.words.forEach((word, w) => {
    const button = el("button", "two-models-word", word);
    button.type = "button";
    // Named apart from the step loop's buttons, which scripts find by their names ("Run", "Step", "Back", "Reset")
    button.setAttribute("aria-label", `${NAMES[side]}'s word ${w + 1}: ${word}`);
    if (w === shownWord) button.classList.add("is-shown");
    if (!sharedIndex.has(w)) button.classList.add("is-own");
    const steps = model.token_words.map((owner, t) => (owner === w ? t + 1 : null)).filter((t) => t !== null);
    button.title = `${NAMES[side]}'s word ${w + 1}, step${steps.length > 1 ? "s" : ""} ${steps.join(", ")}`;
    button.addEventListener("click", () => pick(side, w));
    row.append(button);
  });
  if (!model.words.length) row.append(el("span", "two-models-none", "(no words)"));
  return row;
}

export function mount(component) {
  const box = root(component.element);
  const busy = el("div", "two-models-busy"), line = el("div", "two-models-summary");
  const rule = el("div", "two-models-rule"), sides = el("div", "two-models-sides"), figure = el("div", "two-models-figure");
  box.replaceChildren(busy, line, sides, rule, figure);
  // Each side's focus (see pair.mjs: block); A's follows the page's Focus head when that changes
  let picked = null, focusB = null, focusA = page.look.focus, pageFocus = page.look.focus, shape = null;
  let units = null; // each side's rows of the message drawn (`shape`), read once
  const pick = (side, w) => {
    const message = view.message, a = side === A ? w : follow(message, B, w).word;
    const step = a === null ? null : stepOfWord(message.models[A], a);
    picked = side === B && step === null ? {side, word: w} : null;
    if (step !== null) show(step);
    view.redraw();
  };
  const view = slowView(component, box, ({message, computing}) => {
    busy.textContent = computing;
    const d = page.decoding, usable = pairUsable(message, d, page.key);
    if (!usable || message.error || message.models.length < 2) {
      const why = !d ? "Run or Step to decode, then choose a second model."
        : usable && message.error ? message.error : computing || "Open this tab after a Run.";
      line.textContent = "";
      rule.textContent = "";
      sides.replaceChildren();
      shape = null;
      draw(figure, emptyFigure(why));
      return;
    }
    if (shape !== message) {
      [shape, picked] = [message, null];
      units = message.models.map((side) => unpacked(side, message.source_words.length));
    }
    const at = shownWords(message, page.shown, picked);
    line.textContent = pairSummary(message);
    rule.textContent = at.words[at.from] !== null && !at.shared ? `Not a word the two share. ${RULE}` : "";
    const fits = (f, model) => !f || (f[0] < model.layers && (f.length < 2 || f[1] < model.heads));
    [focusA, focusB] = [focusA, focusB].map((f, side) => (fits(f, message.models[side]) ? f : null));
    const focus = [focusA, focusB];
    sides.replaceChildren(...[A, B].map((side) => {
      const column = el("div", `two-models-side two-models-side-${NAMES[side].toLowerCase()}`);
      const model = message.models[side];
      const choice = select(headChoices(model.layers, model.heads), choiceOf(focus[side]));
      choice.addEventListener("change", () => {
        const chosen = focusOfChoice(choice.value);
        if (side === A) {
          focusA = chosen;
          if (!chosen || chosen.length === 2) { // the page's Focus head holds a head or none
            pageFocus = chosen;
            setLook({focus: chosen});
          }
        } else focusB = chosen;
        view.redraw();
      });
      const shared = new Set(message.shared.map((pair) => (side === A ? pair.a : pair.b)));
      column.append(el("div", "two-models-name", `${NAMES[side]} · ${model.model}`),
        labelled(side === A ? "Head (A)" : "Head (B)", choice, "two-models-head"),
        wordsOf(message, side, at.words[side], shared, pick));
      return column;
    }));
    const rows = [A, B].map((side) => (at.words[side] === null ? null : rowOf(units[side], at.words[side], focus[side])));
    const gd = draw(figure, pairFigure(message, at.words, rows, figure.clientWidth));
    markOnHover(gd);
  }, {on: (what) => {
    if (what === "look" && JSON.stringify(page.look.focus) !== JSON.stringify(pageFocus)) {
      [focusA, pageFocus] = [page.look.focus, page.look.focus];
    }
    if (what === "shown" || what === "decoding") picked = null;
    return what !== "kind";
  }, here: "two_models"});
}
