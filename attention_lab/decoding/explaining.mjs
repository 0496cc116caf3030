// The open tab's message made in the page, from the loop's decoding and the page copy's explanations' graphs: the
// app's road (in_page.mjs) and the live page (export/live.mjs) both explain with it. A tab says how its message is
// made (assets/here.mjs); this makes it for the decoding the page holds, once per decoding, hands it to the tab's
// view, and makes the next greedy step's ahead while the reader looks, so that a Step finds it made.

import {openTabId} from "../assets/dom.mjs";
import {madeHere, makerOf} from "../assets/here.mjs";
import {page, sameKey} from "../assets/store.mjs";

const AHEAD = 8; // messages kept, made or made ahead

/** A promise kept when the browser is next idle (at most a second from now): work made ahead waits for it. */
function idle() {
  return new Promise((resolve) => (globalThis.requestIdleCallback
    ? requestIdleCallback(() => resolve(), {timeout: 1000}) : setTimeout(resolve, 0)));
}

export class Explaining {
  /** `loop()`: the Loop whose decoding is explained now (null: none); `failed(loop, err)`: a graph failed. */
  constructor(loop, failed) {
    Object.assign(this, {loop, failed, made: null, ahead: new Map()});
  }

  /** Whether `explain` makes the open tab's message for what the page shows now: the page makes that tab's, and
   * holds the decoding the loop made (a tab that reads the controls alone: whoever made the decoding). */
  makes() {
    const loop = this.loop(), maker = loop && makerOf(openTabId(), loop.model);
    if (!maker || !loop.model.analyses) return false;
    return !!maker.alone || (!!loop.session && sameKey(page.key, loop.key()));
  }

  /** Make the open tab's message, when it makes it (`makes`). */
  async explain() {
    const tab = openTabId(), loop = this.loop(), maker = loop && makerOf(tab, loop.model);
    if (!this.makes()) return;
    const held = !!loop.session && sameKey(page.key, loop.key());
    const s = held ? loop.session : null, name = loop.model.config.name, make = maker.make;
    const run = s ? {ids: s.srcIds, tokens: s.tokens, ablated: loop.options.ablated || [], key: loop.key(),
      limit: s.maxNew, text: loop.text, // the source as typed (a tab that decodes it with another model: Two models)
      session: s, // the decoding's own weights, for a tab that reads them (heads/in_page.mjs)
      plain: loop.plain, before: loop.before, held: loop.held, // an Ablate's decoding before it, and its words
      beams: loop.beamed ? loop.found.history : null} // the beam search that wrote it: the live beams of each step
      : {ids: [], tokens: [], ablated: [], key: null, limit: loop.ui.options().maxNew}; // no decoding: the controls
    run.asked = maker.asked(loop.model, run); // what the tab's own controls ask: a message of its own
    const made = JSON.stringify([tab, name, run.key, run.tokens, run.ablated, run.asked]);
    if (this.made === made) return;
    this.made = made;
    performance.mark(`road:explain:${tab}`);
    try {
      const message = await this.madeAhead(make, tab, loop.model, run);
      if (this.made !== made || message == null) return; // another decoding came meanwhile: it makes its own
      madeHere(tab, {...message, key: run.key});
      performance.measure(`road:explain:${tab}`, `road:explain:${tab}`);
      await idle(); // the next step's made once the page has drawn this one (the runtime holds the thread)
      if (this.made !== made || !s) return;
      const next = await s.peek();
      if (next !== null && this.made === made) await this.madeAhead(make, tab, loop.model, {...run, tokens: [...run.tokens, next]});
    } catch (err) {
      this.made = null;
      this.failed(loop, err);
    }
  }

  /** Make it again (the tab's own controls changed). */
  again() {
    this.made = null;
    return this.explain();
  }

  /** The tab's message for `run`, made now or taken from those made ahead (the last few, by what they read). */
  madeAhead(make, tab, model, run) {
    const id = JSON.stringify([tab, model.config.name, run.ids, run.tokens, run.ablated, run.asked]);
    if (!this.ahead.has(id)) {
      this.ahead.set(id, make(model, run).catch((err) => {
        this.ahead.delete(id);
        throw err;
      }));
      while (this.ahead.size > AHEAD) this.ahead.delete(this.ahead.keys().next().value);
    }
    return this.ahead.get(id);
  }
}
