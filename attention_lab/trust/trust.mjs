// The Trust tab: a translation scored by the model that reads the source (attention_lab/trust/feature.py sends the
// whole of it in one message). Per token a bar of the source's share of its prediction against the prefix's, with
// log p; the source words, those cross-attention barely read marked, shaded by the shown step's values; the flags,
// each a link to the step or word it points at; and the sentence scores, each with a line on how to read it. A click
// on a flag or a bar shows that step: through the page's shown step when the output is scored, within the tab for a
// pasted translation (its steps are not the decoding's). With the page copy's readings' graph, the page makes the
// message itself for ALTI+ (in_page.mjs), from the tab's controls as the page shows them (trustAsked).

import {el, root} from "../assets/dom.mjs";
import {askAgain, computesHere, textsOf} from "../assets/here.mjs";
import {slowView} from "../assets/slow.mjs";
import {page, show} from "../assets/store.mjs";
import {OPTIONS} from "../decoding/in_page.mjs";
import {BLANK} from "../page_copy/model.mjs";
import {made} from "./in_page.mjs";

let scored = {serial: null, text: null}; // the translation last pasted and scored, and the run it was scored for

// made here for ALTI+ on the output, or on a translation pasted for a model whose tokenizer.json is its target side's
// (ours); a method that needs gradients, or a transformers model's pasted translation, is the server's
computesHere("trust", (model, run) => made(model, run, run.asked ?? trustAsked(model, run)), trustNow, trustAsked);

/** Whether the page makes the tab's message now, for `model` (LiveModel; null: not known yet). */
export function trustNow(model) {
  const method = globalThis.document?.querySelector("#trust-method input:checked")?.value ?? null;
  if (method !== null && method !== textsOf("trust").method) return false;
  const pasted = scored.serial !== null && scored.serial === page.key?.serial && scored.text !== null;
  return !pasted || !model?.config.marks_source;
}

const FLAG_TITLES = {forbidden: "Never written there", uncovered: "Barely read", low_source: "Written from the prefix",
  end_collapse: "Attention on the end token"};
const LEGEND = "Each bar: blue, the share of the prediction that comes from the source (the % beside it); orange, "
  + "from the tokens before it. Click a bar or a flag to see that step.";

/** What the tab asks of its message now (in_page.mjs made's `asked`): the method its radio shows (the server's
 * first where there is no radio: a live page), the translation
 * last scored in this run (null: the output; the server's TrustState.translation), and the decoding's limit (the
 * run's, else the Max length option under the model's own). */
export function trustAsked(model, run) {
  const method = globalThis.document?.querySelector("#trust-method input:checked")?.value ?? textsOf("trust").method;
  const pasted = scored.serial !== null && scored.serial === run.key?.serial ? scored.text : null;
  return {method, pasted, limit: run.limit ?? Math.min(OPTIONS.maxNew || Infinity, model.config.max_new_tokens)};
}

/** Keep what Score and Enter (a translation, blank: the output) and "Score the model's translation" (the output)
 * ask, as the server keeps it for the run shown (trust/feature.py score_translation, score_output). */
function followScoring() {
  const scoring = (text) => {
    scored = {serial: page.key?.serial ?? null, text: text === null || BLANK.test(text) ? null : text};
    askAgain("trust"); // made again, here or by the server
  };
  document.addEventListener("change", (event) => {
    if (event.target.closest?.("#trust-method")) askAgain("trust");
  }, true);
  const typed = () => document.querySelector("#trust-translation textarea, #trust-translation input")?.value ?? null;
  document.addEventListener("click", (event) => {
    if (event.target.closest?.("#trust-score")) scoring(typed());
    else if (event.target.closest?.("#trust-own")) scoring(null);
  }, true);
  document.addEventListener("keydown", (event) => {
    if (event.key === "Enter" && !event.shiftKey && event.target.closest?.("#trust-translation")) scoring(typed());
  }, true);
}

/** Whether `message` scores the decoding the page holds (the output as it stands, not a pasted translation). */
export function scoresOutput(message, decoding) {
  if (!message || message.pasted !== null || !decoding || !message.steps) return false;
  const steps = decoding.steps;
  return message.tokens.length === steps.length && message.tokens.every((t, i) => steps[i].token === t);
}

/** Per step what its bar shows: {step, label, share (0 to 1, or null), logp (or null), flags: [kinds]}. */
export function trustRows(message) {
  const flagged = new Map();
  for (const f of message.flags) {
    if (f.kind === "uncovered") continue;
    flagged.set(f.at, [...(flagged.get(f.at) || []), f.kind]);
  }
  return message.steps.map((s, t) => ({step: s.step, label: message.labels[t], share: s.source_share, logp: s.logp,
    flags: flagged.get(s.step) || []}));
}

const fixed = (v, digits = 2) => (v === null ? "—" : v.toFixed(digits).replace("-", "−"));
const percent = (v) => (v === null ? "—" : `${Math.round(100 * v)}%`);
const layers = (values) => (values.every((v) => v === null) ? "— (no correct translations of this model to compare)"
  : values.map((v, i) => `L${i + 1} ${fixed(v, 3)}`).join(" · "));

/** The sentence scores as [name, value as text, how to read it]. */
export function trustScores(message) {
  const s = message.sentence, reading = message.reading;
  const uncovered = s.uncovered.length ? ` (barely read: ${s.uncovered.map((w) => `“${w}”`).join(", ")})` : "";
  return [
    ["Mean log p", s.mean_logp === null ? "−∞ (a token the model never writes there)" : fixed(s.mean_logp),
      reading.mean_logp],
    ["Source share", percent(s.source_share), reading.source_share],
    ["Coverage", percent(s.coverage) + uncovered, reading.coverage],
    ["Wass-to-Unif", layers(s.wass_to_unif), reading.wass_to_unif],
    ["Wass-to-Data", layers(s.wass_to_data), reading.wass_to_data],
    ["Wass-Combo", fixed(s.wass_combo, 3), reading.wass_combo],
  ];
}

/** Where a flag points: {word} (0-based) for an uncovered word, {step} (1-based) otherwise. */
export function flagPlace(flag) {
  return flag.kind === "uncovered" ? {word: flag.at - 1} : {step: flag.at};
}

/** The step's value per source word (the sum over its pieces), and the largest magnitude among them; null values
 * (a method that gives none there) count as none. */
export function wordValues(message, step) {
  const record = message.steps[step - 1];
  if (!record) return {values: message.words.map(() => null), most: 0};
  const values = message.words.map((w) => {
    const parts = w.pieces.map((p) => record.source[p]).filter((v) => v !== null);
    return parts.length ? parts.reduce((a, b) => a + b, 0) : null;
  });
  const most = Math.max(0, ...values.filter((v) => v !== null).map(Math.abs));
  return {values, most};
}

/** The step the tab shows: the page's when it scores the output, else its own pick (`own`), within the steps. */
export function trustFocus(message, decoding, shownStep, own) {
  const n = message && message.steps ? message.steps.length : 0;
  const step = scoresOutput(message, decoding) ? shownStep : own;
  return step >= 1 && step <= n ? step : null;
}

function scoresView(message) {
  const box = el("div", "trust-scores");
  for (const [name, value, reading] of trustScores(message)) {
    const line = el("div", "trust-score");
    line.append(el("b", "", `${name}: `), el("span", "trust-value", value), " — ", el("span", "trust-reading", reading));
    box.append(line);
  }
  return box;
}

function wordsView(message, focus) {
  const list = el("div", "trust-words");
  const {values, most} = focus ? wordValues(message, focus) : {values: [], most: 0};
  const uncovered = new Set(message.uncovered_words);
  message.words.forEach((w, i) => {
    if (i) list.append(" ");
    const span = el("span", "word", w.label);
    span.dataset.word = String(i);
    const v = values[i];
    if (v !== null && v !== undefined && most > 0) { // shaded by its value, red if negative (trust.css)
      span.classList.add("shaded");
      span.classList.toggle("negative", v < 0);
      span.style.setProperty("--shade", Math.abs(v) / most);
    }
    span.title = `Read for ${message.reads[i].toFixed(2)} of a step over the whole translation`
      + (v !== null && v !== undefined ? `; at step ${focus}: ${v.toFixed(3)}` : "");
    if (uncovered.has(i)) {
      span.classList.add("uncovered");
      span.title += " (barely read)";
    }
    list.appendChild(span);
  });
  return list;
}

function barsView(message, focus, pick) {
  const list = el("div", "trust-bars");
  for (const row of trustRows(message)) {
    const label = el("span", "trust-token", `${row.step}. ${row.label}`);
    const bar = el("div", "trust-bar"), text = el("span", "trust-figures" + (row.flags.length ? " flagged" : ""));
    bar.dataset.step = String(row.step);
    if (row.share !== null) { // the source's share, then the prefix's (trust.css)
      bar.style.setProperty("--share", row.share);
      bar.append(el("div", "from-source"), el("div", "from-prefix"));
    }
    text.textContent = (row.logp === null ? "never written here" : `${percent(row.share)} · log p ${fixed(row.logp)}`)
      + (row.flags.length ? ` · ${row.flags.map((k) => FLAG_TITLES[k]).join(", ")}` : "");
    for (const part of [label, bar]) {
      part.addEventListener("click", () => pick({step: row.step}));
      if (row.step === focus) part.classList.add("current");
    }
    list.append(label, bar, text);
  }
  return list;
}

function flagsView(message, pick) {
  const list = el("div", "trust-flags");
  if (!message.flags.length) list.textContent = "No flags: every token allowed, every word read, every step reading "
    + "the source.";
  for (const flag of message.flags) {
    const item = el("div", "trust-flag");
    item.dataset.kind = flag.kind;
    item.dataset.at = String(flag.at);
    const where = flag.kind === "uncovered" ? `word ${flag.at}` : `step ${flag.at}`;
    item.append(el("b", "", `${FLAG_TITLES[flag.kind]} (${where}): `), flag.message);
    item.addEventListener("click", () => pick(flagPlace(flag)));
    list.appendChild(item);
  }
  return list;
}

export function mount(component) {
  const box = root(component.element);
  const busy = el("div", "trust-busy"), body = el("div", "trust-body");
  box.replaceChildren(busy, body);
  let own = null;
  const pick = (place) => {
    if (place.word !== undefined) {
      const word = box.querySelector(`.trust-words [data-word="${place.word}"]`);
      if (word) word.scrollIntoView({block: "nearest"});
      return;
    }
    if (scoresOutput(view.message, page.decoding)) show(place.step);
    own = place.step;
    view.redraw();
  };
  const take = (value, last) => { // null: the page made none (the server makes it)
    if (!last || !value || last.pasted !== value.pasted) own = null;
    return value?.op === "trust" ? value : null;
  };
  followScoring();
  const view = slowView(component, box, ({message, computing}) => {
    busy.textContent = computing;
    if (!message) {
      body.replaceChildren(el("div", "trust-hint", computing ? "" : "Run or Step, or paste a translation to score."));
      return;
    }
    const what = message.pasted === null ? "The model's translation" : `“${message.pasted}”`;
    const top = el("div", "trust-what", `${what}, scored by ${message.title}. ${message.held || ""}`);
    if (message.hint || !message.sentence) {
      body.replaceChildren(top, el("div", "trust-hint", message.hint || ""));
      return;
    }
    const focus = trustFocus(message, page.decoding, page.shown, own);
    const heading = (text) => el("div", "lab-label", text);
    body.replaceChildren(top, scoresView(message), heading("Source words (dashed: barely read; shaded: the shown step's "
      + "values)"), wordsView(message, focus), heading("Flags"), flagsView(message, pick),
    heading("Where each token comes from"), el("div", "trust-note", LEGEND), barsView(message, focus, pick),
    el("div", "trust-note", message.note));
  }, {take, on: (what) => what !== "kind" && what !== "look", here: "trust"});
}
