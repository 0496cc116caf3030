// The Why tab: at the shown step, the source words shaded by the chosen attribution beside the same words shaded by
// attention, the prefix with its share, each head's agreement with the attribution (a click on a head focuses it),
// and the decoder's lens. The decoding's attribution and lens come once, from the server
// (attention_lab/why/feature.py) or, while the page decodes and the tab asks for occlusion or value zeroing, from the
// page itself (in_page.mjs, over the page copy's attribution graph); every step, head, word and reading is drawn here
// from what the page holds.

import {el, root} from "../assets/dom.mjs";
import {draw, shade} from "../assets/plot.mjs";
import {askAgain, computesHere, madeHere, textsOf} from "../assets/here.mjs";
import {slowView} from "../assets/slow.mjs";
import {page, sameKey, setLook} from "../assets/store.mjs";
import {stepRow} from "../assets/units.mjs";
import {now, shadedWords} from "../decoding/looked_at.mjs";
import {agreementGrid} from "./agreement.mjs";
import {lensFigure} from "./lens.mjs";
import {decoderLens, made, makesHere} from "./in_page.mjs";
import {agreement} from "./rank.mjs";

/** What the tab asks now, as in_page.mjs `made` takes it: the method and aggregate its radios show (the server's
 * first values before they are drawn), and the decoding's own limit. */
export function askedNow(model = null, run = {}) {
  const t = textsOf("why"), checked = (id) => document.querySelector(`#${id} input:checked`)?.value;
  const loop = model && globalThis.attentionLabRoad?.loops?.get(model.config.name);
  return {method: checked("why-method") ?? t.method, aggregate: checked("why-aggregate") ?? t.aggregate,
    limit: run.limit ?? loop?.session?.maxNew ?? null};
}

/** Whether the page makes the tab's message for the copy `model` with its controls as they are (in_page.mjs
 * makesHere: a gradient method needs the copy's gradients graph). */
export function whyNow(model = null) {
  return makesHere(askedNow().method, model);
}

let handed = null; // the DecoderLens last handed to its view (a Step leaves it as it is: not drawn again)

// with the page copy's attribution graph, the page makes this tab's message, for the methods it makes, and the
// DecoderLens below it (decoderlens.mjs draws it)
computesHere("why", async (model, run) => {
  const asked = run.asked ?? askedNow(model, run);
  const message = await made(model, run, asked); // first: the DecoderLens of a new source takes a few decodings
  decoderLens(model, run, asked).then((lens) => lens !== handed && madeHere("decoderlens", (handed = lens)))
    .catch((err) => madeHere("decoderlens", {layers: [], limit: asked.limit, op: "decoderlens", error: String(err.message || err)}));
  return message;
}, whyNow, askedNow);
globalThis.attentionLabWhy = {changed: () => askAgain("why")}; // a radio changed (feature.py ASKED_AGAIN)

/** Values per piece summed into the units a view shows (groups of pieces). */
export function summed(values, groups) {
  return groups.map((g) => g.reduce((total, i) => total + (values[i] || 0), 0));
}

/** What the tab draws at step `shown` from the page's decoding and the server's `message`: the written token, the
 * source and prefix units with their attribution, the attention, each head's agreement. Words merge as the
 * attention views do: a word's attribution is its pieces' sum. */
export function why(decoding, message, shown, look) {
  if (!shown) return {empty: "Nothing written yet: Step or Run, and each written token is explained here."};
  const record = message.steps[shown - 1], step = decoding.steps[shown - 1];
  if (message.error) return {empty: message.error};
  if (!record || message.tokens[shown - 1] !== step.token) return {empty: "Attributing this step…"};
  const cross = stepRow(decoding, "cross", shown, look), self = stepRow(decoding, "decoder_self", shown, look);
  const source = summed(record.source, cross.groups), prefix = summed(record.prefix, self.groups);
  const top = Math.max(1e-12, ...source.map(Math.abs), ...prefix.map(Math.abs));
  const unitsOf = (labels, values, groups) => labels.map((label, i) => ({label, value: values[i], shade: values[i] / top,
    pieces: groups[i]}));
  const state = {empty: false, step: shown, token: step.label, prob: step.prob, forced: step.forced,
    title: message.title, notes: message.notes, share: record.source_share,
    source: unitsOf(cross.labels, source, cross.groups), prefix: unitsOf(self.labels, prefix, self.groups),
    attention: now(decoding, shown, look),
    agreement: {cross: agreement(cross, source), decoder_self: agreement(self, prefix)}};
  if (record.gap !== undefined && record.gap !== null) {
    state.gap = {total: record.total, change: record.total - record.gap, gap: record.gap};
  }
  return state;
}

function wordRow(label, words, shadeOf, titleOf) {
  const row = el("div", "why-row");
  row.append(el("div", "why-label", label), shadedWords(words, shadeOf, titleOf));
  return row;
}

/** The tab's words and lines (its grids are drawn by agreementGrid, its figure by lensFigure). */
export function renderWhy(container, state) {
  const view = el("div", "why-view");
  container.replaceChildren(view);
  if (state.empty) {
    view.textContent = state.empty;
    return;
  }
  const heading = el("div", "why-heading");
  heading.append(`Step ${state.step} wrote `, el("b", "", state.token || "∅"),
    ` (p = ${state.prob.toFixed(3)}${state.forced ? ", forced by a what-if" : ""}). Why?`);
  const value = (w) => `${state.title}: ${w.value.toFixed(4)}`;
  let lines = state.share === null ? ""
    : `The source has ${(100 * state.share).toFixed(0)}% of the attribution, the prefix ${(100 * (1 - state.share)).toFixed(0)}%.`;
  if (state.gap) {
    const {total, change, gap} = state.gap;
    const part = Math.abs(change) > 1e-9 ? ` (${(100 * Math.abs(gap / change)).toFixed(0)}% of it)` : "";
    lines += ` Completeness: the values add up to ${total.toFixed(3)}, log p changed by ${change.toFixed(3)} from the `
      + `baseline: a gap of ${gap.toFixed(3)}${part}.`;
  }
  const by = state.title.toLowerCase();
  view.append(heading, el("div", "why-note", `${state.notes.method} ${state.notes.words}`),
    wordRow(`Source, by ${by}`, state.source, (w) => shade(w.shade, true), value),
    wordRow(`Source, by attention (${state.attention.name})`, state.attention.words || [],
      (w) => shade(Math.max(0, Math.min(1, w.shade))), (w) => `weight ${w.weight.toFixed(3)}`),
    wordRow(`Prefix, by ${by}`, state.prefix, (w) => shade(w.shade, true), value), el("div", "why-note", lines));
}

/** Whether `message` (the server's Why message) may be drawn for the decoding the page holds: its own, or, while a
 * new one is on its way after a Step or a Back, one made at or after the last whole decoding received with the same
 * tokens for the steps both have. */
export function usable(message, d) {
  if (!d || !message || message.op !== "why") return false;
  const [why, now, full] = [message.key, page.key, page.fullKey];
  if (sameKey(why, now)) return true;
  return !!now && !!full && why.serial === now.serial && full.serial === now.serial && why.version >= full.version
    && message.tokens.every((t, i) => i >= d.steps.length || d.steps[i].token === t);
}

export function mount(component) {
  const box = root(component.element);
  const busy = el("div", "why-busy"), words = el("div", "why-text"), note = el("div", "why-agree-note note");
  const crossBox = el("div", "why-cross"), selfBox = el("div", "why-self"), lensBox = el("div", "why-lens");
  const agree = el("div", "why-agree");
  agree.append(crossBox, selfBox);
  box.replaceChildren(busy, words, agree, note, lensBox);
  slowView(component, box, ({message, computing}) => {
    const d = page.decoding, ok = usable(message, d);
    busy.textContent = computing;
    const state = !d ? {empty: "Run or Step to decode."} : ok ? why(d, message, page.shown, page.look)
      : {empty: computing || "Open this tab after a Run."};
    renderWhy(words, state);
    if (ok && message.lens) draw(lensBox, lensFigure(d, message.lens, page.shown, lensBox.clientWidth));
    else lensBox.replaceChildren();
    if (state.empty) {
      crossBox.replaceChildren();
      selfBox.replaceChildren();
      note.textContent = "";
      return;
    }
    note.textContent = message.notes.agreement;
    const grids = [[crossBox, state.agreement.cross, "Cross heads vs the source's attribution", "Cross heads' agreement"],
      [selfBox, state.agreement.decoder_self, "Decoder self heads vs the prefix's", "Decoder self heads' agreement"]];
    for (const [box, grid, title, name] of grids) {
      box.replaceChildren(agreementGrid(grid, title, name, page.look.focus, (focus) => setLook({focus})));
    }
  }, {here: "why"});
}
