// The server's answers that come after the page wrote the step loop's outputs itself (in_page.mjs: the Output, the
// notice, Step, Back, the decoding before a what-if). Every event the page sends the server is numbered as it goes
// (page/wiring.py: SENDS_PAGE calls `sending`), and the page is told when its answer has come whole (ANSWERED calls
// `answered`, after the last of it: gradio sends a stream's last part again as it ends). An answer to an event sent
// before the page last wrote those outputs was made for what the page showed then: what it put in them is out of date,
// so the page writes its own again. An answer to an event sent since was made from the decoding the page wrote
// (decoding/from_page.py takes it first): it is newer, and stands.

import {page, sameKey} from "../assets/store.mjs";

export class Answers {
  /** `rewrite(outputs)`: write the loop's outputs again (as the road's `write` takes them), as they were written. */
  constructor(rewrite) {
    Object.assign(this, {rewrite, sends: 0, sent: new Map(), own: null});
  }

  /** Event `id` (its number in the wiring: one at a time is on its way) is being sent. */
  sending(id) {
    this.sent.set(id, ++this.sends);
  }

  /** The page wrote `outputs` (some of the loop's outputs), for the decoding it holds now. */
  wrote(outputs) {
    const kept = this.own && sameKey(this.own.key, page.key) ? this.own.outputs : {};
    this.own = {key: page.key, outputs: {...kept, ...outputs}, after: this.sends};
  }

  /** The answer to event `id` has come whole: if the event was sent before the page last wrote the loop's outputs,
   * and the page still holds the decoding it wrote them for, they are written again. An answer to an event sent
   * since ends that: it was made from what the page wrote, and may have changed some of it. */
  answered(id) {
    const sent = this.sent.get(id);
    if (!this.own || sent === undefined) return;
    if (sent > this.own.after) this.own = null;
    else if (sameKey(page.key, this.own.key)) this.rewrite(this.own.outputs);
  }
}
