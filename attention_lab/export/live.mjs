// The live page: a model (ours, or a transformers model's page copy) decoding in the page (page_copy/model.mjs, ONNX Runtime Web), with the app's step
// loop as the app's page runs it (decoding/loop.mjs: Model, Source, Run, Step, Back, Reset, Show step, an Output
// box, the keys, the candidates and what-if) and the app's own views, which draw the messages the loop makes of its
// decoding (decoding/messages.mjs) as they draw the server's.
// attention_lab/export/live.py writes the page: the controls; this module, bundled with what it imports in a file
// (assets/bundled, made by esbuild) or imported as it is in a folder; and the parts (the graphs, their weights, the
// tokenizer, the runtime) inside the file or beside it in a folder. The tabs whose messages the page makes itself
// (Flow...: assets/here.mjs) come in from the entry above the features (attention_lab/tabs.mjs), each drawn by its
// own module in a tab of this page's row, from what the explanations' graphs compute (decoding/explaining.mjs).

import {mount as candidates} from "../decoding/candidates.mjs";
import {mount as now} from "../decoding/looked_at.mjs";
import {mount as steps} from "../decoding/steps.mjs";
import {mount as views} from "../core/views.mjs";
import {install, KEYS} from "../assets/keys.mjs";
import {receive, setKind, setLook, setNames} from "../assets/store.mjs";
import {RUNTIME_ADDRESS} from "../page_copy/helper.mjs";
import {graphFile, LiveModel} from "../page_copy/model.mjs";
import {asked, linkOf} from "../assets/address.mjs";
import {declare, hereTabs, offerCopies, onOffered} from "../assets/here.mjs";
import {watch} from "../assets/store.mjs";
import {Explaining} from "../decoding/explaining.mjs";
import {Loop} from "../decoding/loop.mjs";

const none = () => {};

function part(name, trigger = none) {
  const element = document.querySelector(`[data-part="${name}"]`);
  const inner = document.createElement("div");
  inner.className = "lab-drawn";
  element.replaceChildren(inner);
  return {element, props: {value: null}, watch: none, trigger};
}

/** The page's controls (written by live.py), and what the loop says back to them (decoding/loop.mjs's `ui`);
 * `options`: what the app's controls hold as they open (export/markup.py LIVE_OPTIONS). */
function controls(options) {
  const $ = (id) => document.getElementById(id);
  const message = $("live-message");
  const ui = {
    buttons: ["lab-run", "lab-step", "lab-back", "lab-reset"].map($),
    source: () => $("lab-source").value,
    setSource: (text) => ($("lab-source").value = text),
    options: () => ({topK: options.topK, maxNew: options.maxNew}),
    search: () => ({strategy: $("lab-strategy")?.value ?? "greedy", beamSize: options.beamSize}),
    output: (text) => ($("lab-output").value = text),
    status: "",
    wrote(outputs) {
      ui.output(outputs.output);
      ui.status = outputs.status;
      ui.say("");
    },
    say(text, error = false) {
      message.textContent = text || ui.status;
      message.classList.toggle("error", Boolean(text) && error);
    },
  };
  return ui;
}

/** The runtime's threads: where the page is cross-origin isolated (a served folder whose host sends the headers its
 * README asks for), half the cores (rounded down), at least 2 and at most 4; else one (a file from disk, most hosts:
 * no SharedArrayBuffer). */
export function threads() {
  if (!globalThis.crossOriginIsolated) return 1;
  return Math.max(2, Math.min(4, Math.floor((globalThis.navigator?.hardwareConcurrency || 2) / 2)));
}

let opened = null;
let carried = {}; // the modules of the tabs the page makes, by id (the entry above the features hands them in)

/** The tabs this page carries besides the Attention tab: their modules, by id (attention_lab/tabs.mjs). */
export function carry(tabs) {
  carried = tabs;
}

/** The tab row (live.py writes it as gradio's: #lab-tabs, a button per tab with its data-tab-id): a tab opened
 * shows its panel and hides the others; `opened(id)` follows. */
function tabRow(opened) {
  const buttons = [...document.querySelectorAll("#lab-tabs button[role=tab]")];
  for (const button of buttons) {
    button.addEventListener("click", () => {
      for (const other of buttons) {
        const open = other === button;
        other.setAttribute("aria-selected", String(open));
        document.querySelector(`[data-panel="${other.dataset.tabId}"]`).hidden = !open;
      }
      opened(button.dataset.tabId);
    });
  }
}

/** The model the page opens with: the one a link names (?model=...), else the first. */
function firstModel(state) {
  const names = state.models.map((model) => model.name);
  const wanted = asked(globalThis.location.search, {models: names, tabs: []});
  return state.models.find((model) => model.name === wanted.model) ?? state.models[0];
}

/** Show `model`'s example as the library decoded it when the file was exported (`model.first`, the server's own
 * message), its precision, and only the tabs it makes (the open one, if it makes it not, gives way to Attention). */
function shown(model, ui) {
  document.getElementById("lab-model").value = model.name;
  document.querySelector(".live-precision").textContent = `${model.config.precision.said}.`;
  const makes = new Set(["attention", ...(model.here?.tabs || [])]);
  for (const button of document.querySelectorAll("#lab-tabs button[role=tab]")) {
    button.hidden = !makes.has(button.dataset.tabId);
    if (button.hidden && button.getAttribute("aria-selected") === "true") {
      document.querySelector("#lab-tabs button[data-tab-id=attention]").click();
    }
  }
  ui.setSource(model.example);
  receive(model.first);
  ui.output(model.output);
}

/** Mount the views and draw the example of the model the page opens with: the page's first picture, before the
 * model has loaded. The model then decodes it again, the same, and the page is its own. `tabs`: the modules of the
 * tabs the page makes (by id), each mounted in its panel. */
export function open(state, tabs = carried) {
  if (opened) return opened;
  const ui = controls(state.options), page = {live: null, explaining: null, model: firstModel(state)};
  declare(state.here);
  setNames(state.names);
  steps(part("lab-steps"));
  now(part("now"));
  candidates(part("candidates", (event, data) => event === "select" && page.live && page.live.whatIf(data.token, data.shown)));
  views(part("views"));
  for (const id of state.here?.tabs || []) if (tabs[id]) tabs[id].mount(part(`tab-${id}`));
  tabRow(() => page.explaining?.explain());
  setKind(state.kind);
  setLook(state.look);
  shown(page.model, ui);
  ui.say("Loading the model…");
  opened = {ui, page};
  return opened;
}

/** Start the page: `state` is what live.py wrote (the names, the look, and each model's example, its decoding and
 * its copy's config), `parts` what the page needs to decode ({ort, Tokenizer, bytes(name)}). Resolves to the Live
 * once the first model has decoded its example in the page; the Model menu loads another model's copy the first
 * time it is chosen (kept for the next). */
export async function start(state, {ort, Tokenizer, bytes, runtime}, tabs = carried) {
  const {ui, page} = open(state, tabs);
  ort.env.wasm.numThreads = threads();
  ort.env.wasm.wasmBinary = await bytes("ort-wasm-simd-threaded.wasm");
  ort.env[RUNTIME_ADDRESS] = runtime; // where the page imported the runtime from: a helper thread imports it too
  const loops = new Map(); // each model's Loop, loading or loaded, by name
  const loopOf = (model) => {
    if (!loops.has(model.name)) loops.set(model.name, loaded(model, {ort, Tokenizer, bytes}, page, ui));
    return loops.get(model.name);
  };
  explaining(page, ui);
  offerCopies({ // the page's other models, for Two models' side B
    has: (name) => state.models.some((model) => model.name === name),
    load: (name) => loopOf(state.models.find((model) => model.name === name)).then((loop) => loop.model),
  });
  const settle = () => {
    document.body.dataset.steps = String(page.live?.session ? page.live.session.steps.length : 0);
    document.body.dataset.busy = "false";
  };
  const after = (done) => Promise.resolve(done).then(settle);
  globalThis.attentionLabRoad = road(page, ui, after);
  const [run, step, back, reset] = ui.buttons;
  run.addEventListener("click", () => after(page.live?.run()));
  step.addEventListener("click", () => after(page.live?.step()));
  back.addEventListener("click", () => after(page.live?.back()));
  reset.addEventListener("click", () => after(page.live?.reset()));
  install(document, {step: () => after(page.live?.step()), help: () => ui.say(KEYS.map(([k, what]) => `${k}: ${what}`).join(" · "))});
  // a link's source and tab (?source=...&tab=...), as in the app; its model is the one the page opened with
  const names = state.models.map((model) => model.name);
  const wanted = asked(globalThis.location.search, {models: names, tabs: ["attention", ...(state.here?.tabs || [])]});
  const tab = wanted.tab && document.querySelector(`#lab-tabs button[data-tab-id="${wanted.tab}"]`);
  if (tab && !tab.hidden) tab.click();
  if (wanted.source) ui.setSource(wanted.source);
  const kept = () => {
    const link = linkOf(globalThis.location.href, {model: page.model.name, source: ui.source()});
    if (wanted.model || wanted.source || wanted.tab || state.models.length > 1) {
      globalThis.history.replaceState(null, "", link);
    }
  };
  /** Decode with `model` (its copy loaded first, the first time): the buttons wait meanwhile. */
  const choose = async (model, first = false) => {
    page.model = model;
    page.live = null;
    ui.buttons.forEach((b) => (b.disabled = true));
    document.body.dataset.busy = "true";
    if (!first) shown(model, ui);
    ui.say("Loading the model…");
    let live;
    try {
      live = await loopOf(model);
    } catch (err) {
      console.error(err);
      loops.delete(model.name); // chosen again, it is tried again
      if (page.model === model) ui.say(`${model.name} could not load in this page (${String(err.message || err).split("\n")[0]}).`, true);
      return null;
    }
    if (page.model !== model) return null; // another model was chosen meanwhile
    page.live = live;
    window.attentionLabLive = live; // for a person at the console and the tests
    ui.buttons.forEach((b) => (b.disabled = false));
    ui.say("");
    await after(live.run().then(kept)); // as the app opens: the example (or the link's source) decoded, on the last word
    page.explaining?.explain();
    return live;
  };
  document.getElementById("lab-model").addEventListener("change", (event) => {
    const model = state.models.find((m) => m.name === event.target.value);
    if (model && model !== page.model) choose(model);
  });
  const live = await choose(page.model, true);
  if (wanted.problems.length) ui.say(wanted.problems.join(" "), true);
  performance.mark("live:example");
  return live;
}

/** `model`'s copy loaded (its parts under its prefix) and its step loop; its explanations' graphs load after
 * (a graph that fails is said in one line: the Attention tab goes on). */
async function loaded(model, {ort, Tokenizer, bytes}, page, ui) {
  const file = (name) => bytes(model.prefix + name);
  const [encoder, decoder, weights, tokenizer] = await Promise.all(
    ["encoder.onnx", "decoder.onnx", "weights.bin", "tokenizer.json"].map(file));
  performance.mark("live:parts");
  const copy = await LiveModel.load(ort, Tokenizer, {encoder, decoder, weights,
    tokenizer: JSON.parse(new TextDecoder().decode(tokenizer)), config: model.config});
  performance.mark("live:model");
  explainIn(page, copy, model.config, file, ui); // the tabs the page makes, once their graphs have loaded
  return new Loop(copy, ui);
}

/** The page's road, as a tab that answers its own clicks asks the app's (decoding/in_page.mjs Road: a Beam tree
 * node clicked, decoding on from it): the page's loop takes every action (`after`: what the page does once one is
 * done), and it draws the tabs it makes once the model's explanations' graphs have loaded; what the app's server
 * would say of a click no loop takes is said in the page's line. */
function road(page, ui, after) {
  return {
    passing: false,
    taker: () => page.live,
    drawnHere: () => (page.live?.model.analyses ? hereTabs() : []),
    answer: (loop, action, retry, ...args) => after(loop[action](...args)),
    unanswered: (line) => ui.say(line, true), // what the app's server would say
    pass: none,
  };
}

/** The page's explainer: the open tab's message made for the chosen model's decoding after every change of it. */
function explaining(page, ui) {
  const made = (page.explaining = new Explaining(() => page.live, (loop, err) => {
    console.error(err);
    ui.say(`This tab could not be made in the page (${String(err.message || err).split("\n")[0]}).`, true);
  }));
  watch((what) => (what === "decoding" ? made.explain() : null));
  onOffered(() => made.again());
}

/** Load the copy's explanations' graphs (`file(name)`: the copy's file's bytes), then explain the open tab. */
async function explainIn(page, model, config, file, ui) {
  const names = config.analyses || [];
  if (!names.length) return;
  try {
    const graphs = await Promise.all(names.map((name) => file(graphFile(name))));
    model.loadAnalyses(Object.fromEntries(names.map((name, i) => [name, graphs[i]])));
    model.files = file; // the copy's other files the tabs read (config "files"), carried here too
  } catch (err) {
    console.error(err);
    ui.say(`The explanation tabs could not load (${String(err.message || err).split("\n")[0]}).`, true);
    return;
  }
  performance.mark("live:explains");
  page.explaining.explain();
}
