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
import {graphFile, LiveModel} from "../page_copy/model.mjs";
import {asked, linkOf} from "../assets/address.mjs";
import {declare, onOffered} from "../assets/here.mjs";
import {watch} from "../assets/store.mjs";
import {Explaining} from "../decoding/explaining.mjs";
import {Loop} from "../decoding/loop.mjs";

const none = () => {};
const BEAM_SIZE = 4; // the beam search's size when Strategy is beam (export/live.py LIVE_BEAM)

function part(name, trigger = none) {
  const element = document.querySelector(`[data-part="${name}"]`);
  const inner = document.createElement("div");
  inner.className = "lab-drawn";
  element.replaceChildren(inner);
  return {element, props: {value: null}, watch: none, trigger};
}

/** The page's controls (written by live.py), and what the loop says back to them (decoding/loop.mjs's `ui`). */
function controls() {
  const $ = (id) => document.getElementById(id);
  const message = $("live-message");
  const ui = {
    buttons: ["lab-run", "lab-step", "lab-back", "lab-reset"].map($),
    source: () => $("lab-source").value,
    setSource: (text) => ($("lab-source").value = text),
    options: () => ({topK: 5, maxNew: null}),
    search: () => ({strategy: $("lab-strategy")?.value ?? "greedy", beamSize: BEAM_SIZE}),
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

/** Mount the views and draw the example the file was made with, as the library decoded it when the file was
 * exported (`state.first`, the server's own message): the page's first picture, before the model has loaded. The
 * model then decodes it again, the same, and the page is its own. `tabs`: the modules of the tabs the page makes
 * (by id), each mounted in its panel. */
export function open(state, tabs = carried) {
  if (opened) return opened;
  const ui = controls(), page = {live: null, explaining: null};
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
  ui.setSource(state.example);
  receive(state.first);
  ui.output(state.output);
  ui.say("Loading the model…");
  opened = {ui, page};
  return opened;
}

/** Start the page: `state` is what live.py wrote (the names, the look, the example and its decoding, the model's
 * config), `parts` what the page needs to decode ({ort, Tokenizer, bytes(name)}). Resolves to the Live once the
 * example is decoded in the page. */
export async function start(state, {ort, Tokenizer, bytes}, tabs = carried) {
  const {ui, page} = open(state, tabs);
  ort.env.wasm.numThreads = threads();
  ort.env.wasm.wasmBinary = await bytes("ort-wasm-simd-threaded.wasm");
  const [encoder, decoder, weights, tokenizer] = await Promise.all(
    ["encoder.onnx", "decoder.onnx", "weights.bin", "tokenizer.json"].map(bytes));
  performance.mark("live:parts");
  const model = await LiveModel.load(ort, Tokenizer, {encoder, decoder, weights,
    tokenizer: JSON.parse(new TextDecoder().decode(tokenizer)), config: state.config});
  performance.mark("live:model");
  const live = (page.live = new Loop(model, ui));
  explainIn(page, model, state.config, bytes, ui); // the tabs the page makes, once their graphs have loaded
  const settle = () => {
    document.body.dataset.steps = String(live.session ? live.session.steps.length : 0);
    document.body.dataset.busy = "false";
  };
  const after = (done) => done.then(settle);
  const [run, step, back, reset] = ui.buttons;
  run.addEventListener("click", () => after(live.run()));
  step.addEventListener("click", () => after(live.step()));
  back.addEventListener("click", () => after(live.back()));
  reset.addEventListener("click", () => after(live.reset()));
  install(document, {step: () => after(live.step()), help: () => ui.say(KEYS.map(([k, what]) => `${k}: ${what}`).join(" · "))});
  ui.buttons.forEach((b) => (b.disabled = false));
  // a link's source and tab (?source=...&tab=...), as in the app; this page holds one model
  const wanted = asked(globalThis.location.search, {models: [state.config.name], tabs: ["attention", ...(state.here?.tabs || [])]});
  if (wanted.tab) document.querySelector(`#lab-tabs button[data-tab-id="${wanted.tab}"]`)?.click();
  if (wanted.source) ui.setSource(wanted.source);
  const kept = () => {
    const link = linkOf(globalThis.location.href, {model: state.config.name, source: ui.source()});
    if (wanted.model || wanted.source || wanted.tab) globalThis.history.replaceState(null, "", link);
  };
  await after(live.run().then(kept)); // as the app opens: the example (or the link's source) decoded, on the last word
  if (wanted.problems.length) ui.say(wanted.problems.join(" "), true);
  performance.mark("live:example");
  window.attentionLabLive = live; // for a person at the console and the tests
  return live;
}

/** Load the copy's explanations' graphs, then explain the open tab after every change of the decoding (a graph that
 * fails is said in one line: the Attention tab goes on). */
async function explainIn(page, model, config, bytes, ui) {
  const names = config.analyses || [];
  if (!names.length) return;
  try {
    const graphs = await Promise.all(names.map((name) => bytes(graphFile(name))));
    model.loadAnalyses(Object.fromEntries(names.map((name, i) => [name, graphs[i]])));
    model.files = (name) => bytes(name); // the copy's other files the tabs read (config "files"), carried here too
  } catch (err) {
    console.error(err);
    ui.say(`The explanation tabs could not load (${String(err.message || err).split("\n")[0]}).`, true);
    return;
  }
  const explaining = (page.explaining = new Explaining(() => page.live, (loop, err) => {
    console.error(err);
    ui.say(`This tab could not be made in the page (${String(err.message || err).split("\n")[0]}).`, true);
  }));
  watch((what) => (what === "decoding" ? explaining.explain() : null));
  onOffered(() => explaining.again());
  performance.mark("live:explains");
  explaining.explain();
}
