// The app's step loop decodes in this page. After the page's first paint, the model's page copy (its graphs, their
// weights and its tokenizer: page_copy/copies.py, served by the app) loads into ONNX Runtime Web. From then on Run,
// Step, Back, Reset, the keys and a what-if are answered here by the loop a live page runs (loop.mjs), with no
// request; the loop's outputs (Output, the notice, the buttons) are written through gradio in the page (the
// component's "write" event, a js-only listener).
//
// The explanation tabs the app declares (assets/here.mjs: Flow, and the others whose module says how) are made here
// too, once the copy's explanations' graphs have loaded (page_copy/analyses.py): with such a tab open, each
// decoding the page holds is explained by the tab's own maker, and the server is told not to (the decoding it is
// sent names the tabs the page draws: `here`).
//
// The server decodes as before until the copy is ready, where the browser has no WebAssembly, for a model without a
// copy, for a decoding with interventions the server made (an edit, or its own ablation), and while a tab the server
// draws is open (Training, Beams..., or an explanation the page cannot make: a copy without the graph):
// it needs the server for the new decoding anyway, and one request that decodes and draws answers sooner than the
// page's decoding followed by a request that draws. A copy that fails to load, or fails while decoding, hands the
// page to the server with a notice; the click is sent there; an explanations' graph that fails leaves its tabs to
// the server, said on the road's line. Every request the page sends carries the decoding it shows (`decoded`, the
// control "page"), and the server makes that its run before it answers (decoding/from_page.py), so every tab shows
// what the page shows.

import {el, openTabId, root} from "../assets/dom.mjs";
import {computedHere, drawnFromDecoding, hereTabs, knownHere, makerOf, offerCopies, onOffered} from "../assets/here.mjs";
import {page, sameKey, watch} from "../assets/store.mjs";
import {Answers} from "./answers.mjs";
import {intercept} from "./clicks.mjs";
import {Explaining} from "./explaining.mjs";
import {Loop} from "./loop.mjs";
import {loadAnalyses, loadCopy, loadRuntime} from "../page_copy/served.mjs";

const HOLD_MS = 10_000; // the longest a click waits for a switch of model to be answered (Road.hold)
const OFFER_MS = 5000; // the longest an opened tab waits for its module before the server is asked to draw it
const $ = (selector) => document.querySelector(selector);
const TABS = "#lab-tabs button[role=tab]";

// ?road=server in the address: the server decodes, as before this page could (to compare the two, or to teach)
const ASKED_SERVER = new URLSearchParams(globalThis.location?.search ?? "").get("road") === "server";

// The decoding options as gradio holds them (their menu may be shut, and out of the page): the layout's values
// (the road's config) until one changes, then what the js-only listener of decoding/events.py hands `options`.
export const OPTIONS = {strategy: "greedy", beamSize: 4, maxNew: null, topK: 8};

/** The step loop's controls, as the page shows them. */
export function controlsNow() {
  return {model: $("#lab-model input")?.value ?? "", source: $("#lab-source textarea")?.value ?? "", ...OPTIONS};
}

/** What a copy in a reduced precision changes, in the words its config gives (page_copy/copies.py
 * precision_said; "" for float32): a person must know when the drawing is not the float32 model's. */
export function precisionNote({precision}) {
  return !precision || precision.name === "float32" ? "" : ` in ${precision.said}`;
}

/** The page's road: which models decode here, and the loop of each. */
export class Road {
  constructor(config, writer) {
    Object.assign(this, {config, writer, runtime: null, models: new Map(), loops: new Map(), broken: new Map()});
    this.explaining = new Map(); // model -> "loading", "ready" or "failed (why)": its explanations' graph
    this.explainer = new Explaining(() => {
      const loop = this.loops.get(controlsNow().model);
      return loop && this.explaining.get(loop.model.config.name) === "ready" ? loop : null;
    }, (loop, err) => {
      this.unexplained(loop.model.config.name, err);
      this.changed();
    });
    this.retired = new Map(); // the loops of copies that failed while decoding
    const first = config.options || {};
    this.options(first.strategy ?? "greedy", first.beam_size ?? 4, first.max_len ?? null, first.top_k ?? 8);
    this.pending = null;
    this.passing = false; // a click handed on to the server
    this.sends = 0; // how many decodings the page has sent: the server takes none older than one it took
    this.answers = new Answers((outputs) => this.write(outputs, false)); // answers older than its writes (answers.mjs)
    offerCopies({ // another model's copy, for a tab that reads two models (Two models' side B)
      has: (name) => typeof WebAssembly === "object" && !ASKED_SERVER && !!this.config.copies[name] && !this.broken.has(name),
      load: async (name) => {
        await this.load(name);
        const model = this.loops.get(name)?.model;
        if (!model) throw new Error(this.broken.get(name) ?? `${name}'s page copy did not load`);
        return model;
      },
    });
  }

  /** Where the model `name` decodes now, in words, and whether it is here ("page"), coming ("loading") or not. */
  where(name) {
    if (typeof WebAssembly !== "object") return ["server", "Decodes on the server: this browser has no WebAssembly."];
    if (ASKED_SERVER) return ["server", "Decodes on the server, as the address asks (road=server)."];
    if (this.broken.has(name)) return ["server", `Decodes on the server: the page copy failed (${this.broken.get(name)}).`];
    if (!this.config.copies[name]) return ["server", "Decodes on the server: this model has no page copy."];
    if (this.loops.has(name) && !this.drawsOpenTab(name)) return ["server", this.serverTabLine(name)];
    if (this.loops.has(name)) {
      const explains = computedHere(openTabId()) ? " and explains" : "";
      return ["page", `Decodes${explains} in this page${precisionNote(this.loops.get(name).model.config)}.`];
    }
    return ["loading", "Decodes on the server while its page copy loads…"];
  }

  /** Begin loading `name`'s copy (and the runtime, once); the loop is ready when it resolves. */
  load(name) {
    if (this.models.has(name) || this.where(name)[0] !== "loading") return this.models.get(name);
    this.runtime ??= loadRuntime(this.config.runtime);
    const loading = this.runtime
      .then((runtime) => loadCopy(this.config.copies[name], runtime))
      .then((model) => {
        this.loops.set(name, new Loop(model, this.ui(name)));
        performance.mark(`road:ready:${name}`);
        if (model.config.analyses?.length) this.loadExplanations(name, model);
      })
      .catch((err) => this.fail(name, err));
    this.models.set(name, loading);
    loading.then(() => this.changed());
    return loading;
  }

  /** Load the copy's explanations' graph: then the tabs that can be made here are (a failure leaves them to the
   * server, said on the road's line). */
  loadExplanations(name, model) {
    this.explaining.set(name, "loading");
    loadAnalyses(model)
      .then(() => {
        this.explaining.set(name, "ready");
        performance.mark(`road:explains:${name}`);
      })
      .catch((err) => this.unexplained(name, err))
      .then(() => {
        this.changed();
        this.explain();
      });
  }

  unexplained(name, err) {
    console.error(err);
    this.explaining.set(name, `failed (${String(err.message || err).split("\n")[0]})`);
  }

  /** Whether the page draws the open tab for model `name`: one drawn from its decoding alone (Attention, Compare),
   * or one it computes itself (assets/here.mjs) once the copy's explanations' graph is loaded. */
  drawsOpenTab(name) {
    const open = openTabId();
    const model = this.loops.get(name)?.model ?? null;
    return open === null || drawnFromDecoding(open) || (computedHere(open, model) && this.explaining.get(name) === "ready");
  }

  /** Whether the page draws the open tab itself for what it shows now (page/fill.mjs): it decodes the model chosen,
   * and makes that tab's message for the decoding shown (one the server made, or edited, it does not). */
  makesOpenTab() {
    const name = controlsNow().model;
    return this.loops.has(name) && this.drawsOpenTab(name) && this.explainer.makes();
  }

  /** Why the server draws the open tab. */
  serverTabLine(name) {
    const open = openTabId(), model = this.loops.get(name)?.model ?? null;
    if (hereTabs().includes(open) && !knownHere(open)) return "Decodes on the server while this tab loads…";
    if (hereTabs().includes(open) && !computedHere(open, model)) return "Decodes on the server: what this tab shows now is made there.";
    if (!computedHere(open, model)) return "Decodes on the server while this tab is open.";
    const state = this.explaining.get(name);
    if (state === "loading") return "Decodes on the server while this tab's graph loads…";
    if (state) return `Decodes on the server while this tab is open: the explanations' graph ${state}.`;
    return "Decodes on the server while this tab is open: this model's copy has no explanations' graph.";
  }

  /** A tab was opened: the server is asked to draw it (the road's "open" event) unless the page draws it from the
   * decoding it holds (its own, or none). A tab the page makes whose module has not loaded yet (gradio loads it as
   * the tab first opens) is decided once it has said how (`offered`), or after OFFER_MS. */
  opened() {
    const tab = openTabId(), name = controlsNow().model, loop = this.loops.get(name);
    clearTimeout(this.waiting?.timer);
    this.waiting = null;
    if (loop && hereTabs().includes(tab) && !knownHere(tab)) {
      this.waiting = {tab, timer: setTimeout(() => this.offered(tab, true), OFFER_MS)};
      return;
    }
    // decided once the loop has done what it was asked (mid-action, the page holds the decoding before the loop's)
    (loop ? loop.queue : Promise.resolve()).then(async () => {
      if (openTabId() !== tab) return; // another tab opened meanwhile: decided for it
      let ours = !this.switching() && (!page.decoding || (!!loop && sameKey(page.key, loop.key())));
      // drawn whoever made the decoding the page shows: a tab drawn from it (Attention, Compare), and one the page
      // makes from the controls alone (Survey, Training) once its graphs are ready
      const anyway = !this.switching() && !!loop && this.explaining.get(name) === "ready"
        && (drawnFromDecoding(tab) || !!makerOf(tab, loop.model)?.alone);
      // another tab the page makes, on the server's greedy decoding (the example the app opened with): taken over
      if (!ours && !anyway && loop && !this.switching() && OPTIONS.strategy !== "beam" && this.drawsOpenTab(name)) {
        ours = await loop.adopt();
        if (openTabId() !== tab) return;
        if (ours) this.explain();
      }
      if (!((ours || anyway) && this.drawsOpenTab(name))) this.writer.open();
    });
  }

  /** The module of `tab` has said how the page makes it (or, `late`, has not in time): a wait for it ends. */
  offered(tab, late = false) {
    if (this.waiting?.tab !== tab) return;
    if (late && !knownHere(tab)) {
      this.waiting = null;
      if (openTabId() === tab) this.writer.open();
    } else setTimeout(() => this.waiting?.tab === tab && this.opened(), 0); // once gradio has switched to it
  }

  /** The tabs the page draws for model `name` now (what the server need not make: decoding/from_page.py). */
  drawnHere(name) {
    const model = this.loops.get(name)?.model ?? null;
    return this.explaining.get(name) === "ready" ? hereTabs().filter((tab) => computedHere(tab, model)) : [];
  }

  /** Make the open tab's message here, when the page makes it (explaining.mjs). */
  explain() {
    return this.explainer.explain();
  }

  fail(name, err) {
    console.error(err);
    if (this.loops.has(name)) this.retired.set(name, this.loops.get(name)); // what it decoded still goes to the server
    this.loops.delete(name);
    this.broken.set(name, String(err.message || err).split("\n")[0]);
    this.changed();
  }

  changed() {
    this.writer.where(this.where(controlsNow().model));
  }

  /** Whether the page still shows another model's decoding than the one chosen: a switch of model on its way. */
  switching() {
    return !!page.decoding && page.decoding.model !== controlsNow().model;
  }

  /** Hold a click of the step loop made while a switch of model is on its way, until its answer has come: sent
   * beside it, the switch's answer (nothing decoded) could reach the page after the click's, and stand over it. Then
   * the click is made again, for the page or the server to take; after HOLD_MS, the server takes it. */
  hold(button) {
    clearTimeout(this.holding?.timer);
    this.holding = {button, timer: setTimeout(() => this.release(true), HOLD_MS)};
  }

  /** Make the held click again, once the switch has been answered (or, `anyway`, for the server now). */
  release(anyway = false) {
    if (!this.holding || (!anyway && this.switching())) return;
    const {button, timer} = this.holding;
    clearTimeout(timer);
    this.holding = null;
    if (anyway) this.pass(button);
    else button.click();
  }

  /** The loop that answers `action` now, or null: the server does. While a tab the server draws is open, the server
   * answers; a what-if made while a switch of model is on its way too (a click of the step loop waits for it: hold). */
  taker(action) {
    const now = controlsNow(), loop = this.loops.get(now.model);
    if (!loop || this.passing || !this.drawsOpenTab(now.model)) return null;
    if (page.decoding && page.decoding.model !== now.model) return null;
    return loop.canTake(action) ? loop : null;
  }

  /** `action` done by `loop`. */
  async answer(loop, action, retry, ...args) {
    loop.retry = retry; // the click again, for the server (null: a what-if, said here)
    performance.mark(`road:${action}`);
    await loop[action](...args);
    performance.measure(`road:${action}`, `road:${action}`); // the page's own work for the click
    performance.clearMarks(`road:${action}`);
    if (performance.getEntriesByType("measure").length > 1000) performance.clearMeasures(); // a long session's
  }

  /** The loop's `ui` for model `name` (loop.mjs). */
  ui(name) {
    return {
      source: () => controlsNow().source,
      options: () => ({topK: controlsNow().topK, maxNew: controlsNow().maxNew}),
      search: () => ({strategy: controlsNow().strategy, beamSize: controlsNow().beamSize}),
      wrote: (outputs) => this.write(outputs),
      say: (line) => (line ? this.write({status: line}) : null), // the line alone: the rest stays as it is
      failed: (err, retry) => {
        this.fail(name, err);
        retry();
      },
      refused: (err, retry) => retry(), // the server says a mistake as the app does: a warning, nothing changed
    };
  }

  /** Write the loop's outputs through gradio (the js-only "write" listener calls `written`); `own`: the loop wrote
   * them (not written again after an older answer: answers.mjs). */
  write(outputs, own = true) {
    if (own) this.answers.wrote(outputs);
    this.pending = outputs;
    this.writer.trigger();
  }

  /** The updates of the loop's outputs (Output, the notice, Step, Back, the decoding before): undefined for one
   * the loop did not write, which gradio leaves as it is. */
  written() {
    const o = this.pending || {};
    const update = (name, props) => (name in o ? {__type__: "update", ...props} : undefined);
    const before = o.original || {value: null};
    return [
      update("output", {value: o.output}),
      update("status", {value: o.status, visible: Boolean(o.status)}),
      update("canStep", {interactive: o.canStep}),
      update("canBack", {interactive: o.canBack}),
      update("original", {value: before.value || "", visible: Boolean(before.value), ...(before.label ? {label: before.label} : {})}),
    ];
  }

  /** The decoding options changed (Strategy, Beam size, Max length, Top-k shown, in that order). */
  options(strategy, beamSize, maxLen, topK) {
    Object.assign(OPTIONS, {strategy, beamSize: Number(beamSize), maxNew: Number(maxLen) || null, topK: Number(topK)});
  }

  /** The decoding the page shows, for the server (decoding/from_page.py), as the control's text: "" when the page shows
   * one the server made. Each is numbered in the order the page sent it (`sent`): the server may run a session's
   * events out of order, and takes no decoding sent before one it took. */
  decoded() {
    const loops = [...this.loops.values(), ...this.retired.values()];
    const holder = loops.find((l) => l.session && sameKey(page.key, l.key())); // another model's, before a switch
    const loop = holder || this.loops.get(controlsNow().model) || this.retired.get(controlsNow().model) ||
      loops.find((l) => l.session);
    if (!loop || !(loop.session ? sameKey(page.key, loop.key()) : page.key === null && loop.serial > 0)) return "";
    return JSON.stringify({...loop.decoded(), here: this.drawnHere(loop.model.config.name), sent: ++this.sends,
      tab: openTabId()});
  }

  /** What every event the page sends carries (page/wiring.py SENDS_PAGE): the decoding it shows when it made it
   * (`decoded`), else that the server made it; and the open tab, which the page may have opened with no request. */
  sent() {
    return this.decoded() || JSON.stringify({servers: true, tab: openTabId()});
  }

  /** Send a click the page handed on to the server (`button.click()`, not taken here). */
  pass(button) {
    this.passing = true;
    try {
      button.click();
    } finally {
      this.passing = false;
    }
  }
}

export function mount({element, props, trigger}) {
  const box = root(element);
  const line = el("p", "road-line");
  line.setAttribute("role", "status");
  box.replaceChildren(line);
  const writer = {
    trigger: () => trigger("write"),
    open: () => trigger("open"), // the server draws the tab just opened (app.py wire_tabs)
    where([kind, text]) {
      if (line.textContent === text && line.dataset.road === kind) return; // no change to the page
      line.textContent = text;
      line.dataset.road = kind;
      document.body.dataset.road = kind;
    },
  };
  const road = new Road(props.value || {copies: {}, runtime: {}}, writer);
  globalThis.attentionLabRoad = road; // the page's events read `decoded` (page/wiring.py); tests read the rest
  intercept(road);
  onOffered((tab) => { // the open tab's module has just loaded, or its controls changed
    road.offered(tab); // a tab opened before its module had loaded (its tab button may not say so yet)
    if (tab !== openTabId()) return;
    road.changed();
    road.explainer.again();
  });
  // another tab opened: the line says where decoding happens with it open (once gradio has switched)
  document.addEventListener("click", (event) => {
    if (!event.target.closest?.(TABS)) return;
    setTimeout(() => {
      road.opened();
      road.changed();
      road.explain();
    }, 0);
  });
  const begin = () => {
    road.changed();
    road.load(controlsNow().model);
  };
  // after the first paint, so nothing the page shows first waits for the copy
  requestAnimationFrame(() => setTimeout(begin, 0));
  watch((what) => {
    if (what !== "decoding") return;
    road.release(); // a click held for a switch of model, once it has been answered
    begin(); // another model's decoding came: load its copy
    road.explain(); // the open tab's message, when the page makes it
  });
}
