// The step loop in the page: Run, Step, Back, Reset and a what-if on a model that decodes in the page (model.mjs).
// Each action is answered as the server answers it (decoding/actions.py): the same decoding, the same step shown,
// the same messages (messages.mjs, in the checked-in schema) for the page's views, and the same texts for the loop's
// outputs. The app's page (road.mjs) and a live page (export/live.mjs) both run it; each hands it a `ui`:
//   ui.source()            the Source as typed
//   ui.options()           {topK, maxNew, ablated}: the candidates kept at each step, the most tokens written (null:
//                          the model's), and the heads ablated throughout ([kind, layer, head], 0-based; none by default)
//   ui.search()            (optional) {strategy: "greedy" or "beam", beamSize}: how Run decodes (greedy by default)
//   ui.wrote(outputs)      the loop's outputs changed: {output, status, canStep, canBack, original: {value, label}}
//   ui.say(line, error)    a one-line message ("" clears it); error: a user's mistake
//   ui.failed(err, retry)  (optional) the model failed, not the user: `retry` hands the action to another road
//   ui.refused(err, retry) (optional) the user's mistake, for another road to say in its own way (`retry`, if set)

import {page, receive, sameKey} from "../assets/store.mjs";
import {forced} from "./again.mjs";
import {ALPHA, beamSearch, replayed} from "./beams.mjs";
import {InputError} from "../page_copy/model.mjs";
import {fewer, full, more, original} from "./messages.mjs";

export const FINISHED = "Finished: use Back, a what-if token, or Reset."; // decoding/actions.py
export const STEP_FINISHED = "Decoding has finished: use Back, a what-if token, or Reset.";
export const NOTHING_BACK = "Nothing to go back to: this is step 0.";
export const PICK_FIRST = "Decode a step first, then pick another candidate token.";
export const PICK_LISTED = "Pick one of the candidate tokens listed for this step.";
export const BEAM_MODE =
  "Beam mode: Step is off, since it decodes greedily. Run decodes with beam search (the Beams tab lists them).";

/** The step to show after an action (decoding/state.shown_step): the last word written, not the end token. */
export function lastWord(session) {
  const n = session.steps.length;
  return n > 1 && session.steps[n - 1].token === session.model.config.eos_id ? n - 1 : n;
}

export class Loop {
  constructor(model, ui) {
    Object.assign(this, {model, ui, session: null, text: null, options: null, notice: ""});
    Object.assign(this, {serial: 0, version: 0, before: null, beamed: null, found: null, queue: Promise.resolve()});
    this.unsent = false; // a decoding started that the page does not hold yet
    this.plain = null; // an ablation's decoding before it (heads/actions.py HeadsState.plain)
    this.held = ""; // the ablation, in the step loop's words
    this.undo = null; // a decoding replaced whole (decodeOn), for Back right after: {key, session, before, ...}
  }

  key() {
    return this.session ? {serial: this.serial, version: this.version} : null;
  }

  /** Do `action` after whatever was asked before it (clicks are taken in order); a user's mistake is said in one
   * line and changes nothing. */
  act(action) {
    const retry = this.retry; // the click's own, as it was asked (another may be asked before this one is done)
    this.queue = this.queue.then(async () => {
      try {
        this.ui.say("");
        await action();
      } catch (err) {
        if (!(err instanceof InputError) && this.ui.failed) return this.ui.failed(err, retry || (() => {}));
        if (err instanceof InputError && this.ui.refused && retry) return this.ui.refused(err, retry);
        if (!(err instanceof InputError)) console.error(err);
        this.ui.say(String(err.message || err).split("\n")[0], true);
      }
    });
    return this.queue;
  }

  /** Whether this loop can answer `action` ("run", "step", "back", "reset", "what-if") as the server would: not
   * on a decoding with interventions the server made (an edit, or an ablation it made), Back only on its own decoding (Back
   * right after the server replaced a decoding restores the one it replaced), and a what-if only on a decoding whose
   * source it can read again (its own, or one of the Source as it is now). */
  canTake(action) {
    const held = page.decoding;
    if (held && held.interventions && !sameKey(page.key, this.key())) return false; // the server's ablation or edit
    if (action !== "back" && action !== "what-if") return true;
    if (!held || sameKey(page.key, this.key())) return true;
    if (action === "back") return false; // Back on a decoding the server made is its own: it may undo a replacement
    try {
      return sameSource(held, this.model.source(this.ui.source()).ids, this.model);
    } catch {
      return false;
    }
  }

  /** Take over the decoding the page shows, made by the server, its tokens forced (as `current` does for an action),
   * where this loop reads its source as the Source box holds it and it carries no intervention the server made: a
   * tab the page makes can then draw it. Whether the loop holds the page's decoding now. */
  adopt() {
    this.queue = this.queue.then(async () => {
      const held = page.decoding;
      if (!held || !held.steps.length || sameKey(page.key, this.key()) || !this.canTake("what-if")) return;
      try {
        await this.current(false);
      } catch (err) {
        if (!(err instanceof InputError)) console.error(err);
      }
    });
    return this.queue.then(() => !!this.session && sameKey(page.key, this.key()));
  }

  /** The decoding the actions work on. Run and Step (`fresh`) work on the Source and the options as they are now:
   * the loop's own decoding while it was started from them and the page still holds it; else the page's, when
   * another made it (the server, before this page could decode) from the same source, taken over by forcing its
   * tokens; else a new one. Back and a what-if work on the decoding the page holds, whatever the Source says now. */
  async current(fresh = true) {
    const text = this.ui.source(), options = this.ui.options();
    const ours = this.session && sameKey(page.key, this.key());
    const plainly = (o) => JSON.stringify({...o, ablated: undefined}); // an Ablate holds while nothing else changes
    const asked = text === this.text && plainly(options) === plainly(this.options);
    if (ours && (asked || !fresh)) return this.session;
    const {ids, notice} = this.model.source(text);
    const session = await this.model.start(ids, options.topK, options.maxNew, options.ablated || []);
    Object.assign(this, {session, text, options, before: null, beamed: null, plain: null, held: "", undo: null, drawn: null});
    this.notice = [notice, this.model.lengthNotice(ids)].filter(Boolean).join(" ");
    const held = page.decoding;
    if (held && page.key && !ours && sameSource(held, ids, this.model) && held.steps.every((s, i) => session.canWrite(s.token, i))) {
      for (const step of held.steps) await session.step(step.token);
      [this.serial, this.version] = [page.key.serial, page.key.version];
      return session;
    }
    this.serial = Math.max(this.serial, page.serial) + 1; // a key no decoding the page held had
    this.version = 0;
    this.unsent = true; // the page does not hold it yet: the action that made it sends it whole
    return session;
  }

  /** Tell the views (`message`) and the loop's outputs what changed. */
  send(message) {
    this.unsent = false;
    if (message?.op === "full") this.drawn = message.data.original; // the decoding before, as the page draws it
    if (message) receive(message);
    this.ui.wrote(this.outputs());
  }

  /** The loop's outputs as the server's step loop shows them (decoding/view.py). */
  outputs() {
    const s = this.session, n = s ? s.steps.length : 0;
    const text = (tokens) => this.model.tokenizer.decode(tokens, {skip_special_tokens: true});
    const before = this.before, beam = this.searchMode().strategy === "beam" ? BEAM_MODE : "";
    return {
      output: n ? text(s.tokens) : "",
      status: [s ? this.notice : "", this.held, s && s.finished ? FINISHED : "", beam].filter(Boolean).join(" "),
      canStep: !beam && !(s && s.finished), // as the server's: a finished decoding steps on only for another Source
      canBack: n > 0,
      original: before ? {value: text(before.tokens), label: `Before the ${before.change}`} : {value: null, label: ""},
    };
  }

  changed() {
    this.version++;
    return this.key();
  }

  searchMode() {
    return this.ui.search ? this.ui.search() : {strategy: "greedy", beamSize: 1};
  }

  /** Decode to the end: greedily from where the decoding is (a finished one afresh), or by beam search from the
   * start, its best hypothesis then replayed through the session so that the views draw its own attention. */
  run() {
    return this.act(async () => {
      const session = await this.current();
      const {strategy, beamSize} = this.searchMode();
      if (strategy === "beam") {
        session.reset();
        this.found = await beamSearch(session, beamSize);
        await replayed(session, this.found.tokens);
        this.beamed = beamSize;
      } else {
        if (session.finished) session.reset();
        await session.run();
        this.beamed = null;
      }
      this.before = null;
      this.send(full(session, this.changed(), lastWord(session)));
    });
  }

  step() {
    return this.act(async () => {
      if (this.searchMode().strategy === "beam") throw new InputError(BEAM_MODE);
      const session = await this.current();
      if (session.finished) throw new InputError(STEP_FINISHED);
      const after = this.unsent ? null : this.key();
      await session.step();
      this.beamed = null;
      const key = this.changed();
      this.send(after ? more(session, key, after, lastWord(session)) : full(session, key, lastWord(session)));
    });
  }

  back() {
    return this.act(async () => {
      if (this.undo && sameKey(page.key, this.key()) && sameKey(this.undo.key, this.key())) { // right after a decodeOn
        const {session, before, beamed, found, drawn} = this.undo;
        Object.assign(this, {session, before, beamed, found, undo: null});
        const message = full(session, this.changed(), lastWord(session));
        message.data.original = drawn;
        return this.send(message);
      }
      if (!page.decoding || !page.decoding.steps.length) throw new InputError(NOTHING_BACK);
      const session = await this.current(false);
      if (!session.steps.length) throw new InputError(NOTHING_BACK);
      const after = this.key();
      session.back();
      this.beamed = null;
      this.send(fewer(session, this.changed(), after, lastWord(session)));
    });
  }

  reset() {
    return this.act(async () => {
      Object.assign(this, {session: null, text: null, before: null, plain: null, held: "", undo: null, drawn: null});
      receive({op: "clear", key: null, shown: 0});
      this.ui.wrote(this.outputs());
    });
  }

  /** What if the model had written `token` at step `shown`? Force it there and decode on greedily; the decoding
   * before is kept beside it, as the app does. */
  whatIf(token, shown) {
    return this.act(async () => {
      if (!page.decoding || !page.decoding.steps.length) throw new InputError(PICK_FIRST);
      const session = await this.current(false);
      const at = Math.max(1, Math.min(Number(shown) || 1, session.steps.length));
      if (!session.canWrite(token, at - 1)) throw new InputError(PICK_LISTED);
      const before = session.steps.slice();
      while (session.steps.length >= at) session.back();
      await session.step(token);
      await session.run();
      this.before = {tokens: before.map((s) => s.token), at, change: "what-if"};
      this.beamed = null;
      const message = full(session, this.changed(), at);
      message.data.original = original(session, before, at);
      this.send(message);
    });
  }

  /** Decode on from a hypothesis (`branch()`, asked when the loop comes to it: {path: its token ids, a Beam tree
   * node's; shown: the step to show; beamSize}, or InputError) by `strategy` ("greedy", or "beam" of `beamSize` from
   * the path), and make that the decoding (beam_tree/feature.py decode_on): the decoding it replaces kept beside it
   * (`change` names it), and restored by a Back right after. */
  decodeOn(branch, strategy, change) {
    return this.act(async () => {
      const {path, shown, beamSize} = await branch();
      const session = await this.current(false);
      const made = await forced(session, path);
      if (strategy === "greedy" || made.finished) await made.run();
      else await replayed(made, (await beamSearch(made, beamSize, ALPHA, null, path)).tokens);
      const at = firstDifference(session.steps, made.steps);
      const undo = {session, before: this.before, beamed: this.beamed, found: this.found, drawn: this.drawn};
      Object.assign(this, {session: made, beamed: null, before: {tokens: session.tokens, at, change}});
      const message = full(made, this.changed(), Math.max(1, shown));
      message.data.original = original(made, session.steps, at);
      this.undo = {...undo, key: this.key()};
      this.send(message);
    });
  }

  /** Decode with the heads `heads` ([kind, layer, head], 0-based) removed throughout, the decoding without them kept
   * beside it, as the app does (heads/actions.py HeadTests.ablate): the loop's own finished plain decoding, else one
   * decoded now. `held` says them in the step loop's line while they last. No head: the plain decoding, as Run. */
  ablate(heads, held) {
    return this.act(async () => {
      const session = await this.current();
      const untouched = session.finished && !this.options.ablated?.length && !this.before && !this.beamed;
      let plain = this.plain ?? (untouched ? session : null);
      if (!plain) {
        plain = await this.model.start(session.srcIds, this.options.topK, this.options.maxNew, []);
        await plain.run();
      }
      const made = heads.length ? await this.model.start(plain.srcIds, plain.topK, this.options.maxNew, heads) : plain;
      if (heads.length) await made.run();
      const at = firstDifference(plain.steps, made.steps);
      Object.assign(this, {session: made, beamed: null, plain: heads.length ? plain : null, held: heads.length ? held : ""});
      this.options = {...this.options, ablated: heads};
      this.before = heads.length ? {tokens: plain.tokens, at, change: "ablation"} : null;
      const message = full(made, this.changed(), lastWord(made));
      if (heads.length) message.data.original = original(made, plain.steps, at);
      this.send(message);
    });
  }

  /** The page's decoding as the server needs it to rebuild it (decoding/from_page.py): the model, the source, the
   * options, every token written and where a what-if forced one, the decoding before it, and right after a
   * decodeOn the decoding it replaced, which Back restores there too. */
  decoded() {
    const s = this.session;
    if (!s) return {key: null};
    return {
      key: this.key(),
      model: this.model.config.name,
      source: this.text,
      top_k: this.options.topK,
      max_len: this.options.maxNew,
      tokens: s.tokens,
      shown: page.shown,
      before: this.before,
      beam_size: this.beamed, // the decoding is a beam search's of this size: the server keeps its beams
      strategy: this.searchMode().strategy, // what the loop's outputs were written for (beam mode turns Step off)
      ablate: this.options.ablated || [],
      undo: this.undo && sameKey(this.undo.key, this.key()) ? written(this.undo) : null, // what Back restores now
    };
  }
}

/** A decoding a decodeOn replaced (Loop.undo) as the server reads a decoding the page wrote (decoding/from_page.py
 * Written), to rebuild it for its Back: its tokens, the decoding before it and the beam search that wrote it. */
function written({session, before, beamed}) {
  return {tokens: session.tokens, before, beam_size: beamed};
}

/** Whether the page's decoding `held` reads the source `ids` (the same pieces). */
function sameSource(held, ids, model) {
  return JSON.stringify(ids.map((id) => model.label(id))) === JSON.stringify(held.src.labels);
}

/** The first step (1-based) where two decodings took different tokens; 1 if they never do (run/state.py
 * first_difference). */
function firstDifference(before, after) {
  const n = Math.min(before.length, after.length);
  for (let i = 0; i < n; i++) if (before[i].token !== after[i].token) return i + 1;
  return before.length === after.length ? 1 : n + 1;
}
