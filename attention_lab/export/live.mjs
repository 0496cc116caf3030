// The live page: one of our models decoding in the page (model.mjs, ONNX Runtime Web), with the app's step loop
// (Model, Source, Run, Step, Back, Reset, Show step, an Output box, the keys, the candidates and what-if) and the
// app's own views, which draw the messages this page makes of its decoding (messages.mjs) as they draw the server's.
// attention_lab/export/live.py writes the page: the controls, this module bundled with what it imports, and the
// parts (the graphs, their weights, the tokenizer, the runtime) inside the file or beside it in a folder.

import {mount as candidates} from "../decoding/candidates.mjs";
import {mount as now} from "../decoding/now.mjs";
import {mount as steps} from "../decoding/steps.mjs";
import {mount as views} from "../attention/views.mjs";
import {install, KEYS} from "../assets/keys.mjs";
import {receive, setKind, setLook, setNames, show} from "../assets/store.mjs";
import {InputError, LiveModel} from "./model.mjs";
import {fewer, full, more, original} from "./messages.mjs";

const none = () => {};

function part(name, trigger = none) {
  const element = document.querySelector(`[data-part="${name}"]`);
  const inner = document.createElement("div");
  inner.className = "lab-drawn";
  element.replaceChildren(inner);
  return {element, props: {value: null}, watch: none, trigger};
}

/** The page's decoding and what it has sent its views (the key of the decoding they hold). */
export class Live {
  constructor(model, ui) {
    Object.assign(this, {model, ui, session: null, text: null, serial: 0, version: 0, queue: Promise.resolve()});
  }

  key() {
    return {serial: this.serial, version: this.version};
  }

  /** Do `action` after whatever was asked before it (clicks are taken in order); a message for bad input. */
  act(action) {
    this.queue = this.queue.then(async () => {
      try {
        this.ui.say("");
        await action();
      } catch (err) {
        if (!(err instanceof InputError)) console.error(err);
        this.ui.say(String(err.message || err).split("\n")[0], true);
      }
      this.ui.settle(this);
    });
    return this.queue;
  }

  /** The session of what the Source holds now: a new one when the text changed since the last. */
  async current() {
    const text = this.ui.source();
    if (this.session && text === this.text) return this.session;
    const {ids, notice} = this.model.source(text);
    this.session = await this.model.start(ids);
    this.text = text;
    this.serial++;
    this.version = 0;
    this.notice = notice;
    this.send(full(this.session, this.key(), 0));
    return this.session;
  }

  send(message) {
    receive(message);
    const tokens = this.session ? this.session.tokens : [];
    this.ui.output(tokens.length ? this.model.tokenizer.decode(tokens, {skip_special_tokens: true}) : "");
    if (this.notice) this.ui.say(this.notice);
  }

  run() {
    return this.act(async () => {
      const session = await this.current();
      await session.run();
      this.version++;
      this.send(full(session, this.key(), session.steps.length));
    });
  }

  step() {
    return this.act(async () => {
      const session = await this.current();
      if (session.finished) throw new InputError("Decoding has finished: step back or reset first.");
      const after = this.key();
      await session.step();
      this.version++;
      this.send(more(session, this.key(), after));
    });
  }

  back() {
    return this.act(async () => {
      if (!this.session || !this.session.steps.length) return;
      const after = this.key();
      this.session.back();
      this.version++;
      this.send(fewer(this.session, this.key(), after));
    });
  }

  reset() {
    return this.act(async () => {
      if (!this.session) return;
      this.session.reset();
      this.version++;
      this.send(full(this.session, this.key(), 0));
    });
  }

  /** What if the model had written `token` at step `shown`? Force it there and decode on; the decoding before is
   * drawn beside it, as the app does. */
  whatIf(token, shown) {
    return this.act(async () => {
      const session = this.session;
      if (!session || !shown) return;
      const before = session.steps.slice();
      while (session.steps.length >= shown) session.back();
      await session.step(token);
      await session.run();
      this.version++;
      const message = full(session, this.key(), shown);
      message.data.original = original(session, before, shown);
      this.send(message);
    });
  }
}

/** The step of the last word written: the last step, or the one before it when the last wrote the end token. */
function lastWord(session) {
  const n = session.steps.length;
  return n > 1 && session.steps[n - 1].token === session.model.config.eos_id ? n - 1 : n;
}

/** The page's controls (written by live.py), and what the decoding says back to them. */
function controls() {
  const $ = (id) => document.getElementById(id);
  const message = $("live-message");
  return {
    buttons: ["lab-run", "lab-step", "lab-back", "lab-reset"].map($),
    source: () => $("lab-source").value,
    setSource: (text) => ($("lab-source").value = text),
    output: (text) => ($("lab-output").value = text),
    say(text, error = false) {
      message.textContent = text;
      message.classList.toggle("error", error);
    },
    settle(live) {
      document.body.dataset.steps = String(live.session ? live.session.steps.length : 0);
      document.body.dataset.busy = "false";
    },
  };
}

let opened = null;

/** Mount the views and draw the example the file was made with, as the library decoded it when the file was
 * exported (`state.first`, the server's own message): the page's first picture, before the model has loaded. The
 * model then decodes it again, the same, and the page is its own. */
export function open(state) {
  if (opened) return opened;
  const ui = controls(), page = {live: null};
  setNames(state.names);
  steps(part("lab-steps"));
  now(part("now"));
  candidates(part("candidates", (event, data) => event === "select" && page.live && page.live.whatIf(data.token, data.shown)));
  views(part("views"));
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
export async function start(state, {ort, Tokenizer, bytes}) {
  const {ui, page} = open(state);
  ort.env.wasm.numThreads = 1;
  ort.env.wasm.wasmBinary = await bytes("ort-wasm-simd-threaded.wasm");
  const [encoder, decoder, weights, tokenizer] = await Promise.all(
    ["encoder.onnx", "decoder.onnx", "weights.bin", "tokenizer.json"].map(bytes));
  performance.mark("live:parts");
  const model = await LiveModel.load(ort, Tokenizer, {encoder, decoder, weights,
    tokenizer: JSON.parse(new TextDecoder().decode(tokenizer)), config: state.config});
  performance.mark("live:model");
  const live = (page.live = new Live(model, ui));
  const [run, step, back, reset] = ui.buttons;
  run.addEventListener("click", () => live.run());
  step.addEventListener("click", () => live.step());
  back.addEventListener("click", () => live.back());
  reset.addEventListener("click", () => live.reset());
  install(document, {step: () => live.step(), help: () => ui.say(KEYS.map(([k, what]) => `${k}: ${what}`).join(" · "))});
  ui.buttons.forEach((b) => (b.disabled = false));
  await live.run();
  await live.act(async () => show(lastWord(live.session))); // as the app opens: on the last word written
  performance.mark("live:example");
  window.attentionLabLive = live; // for a person at the console and the tests
  return live;
}
