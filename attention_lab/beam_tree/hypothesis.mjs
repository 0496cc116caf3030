// The Beam tree tab's clicked node: its hypothesis (the path from the start token to the node, forced on the decoder
// by the server, or by the page where it draws the tree: in_page.mjs) drawn by the Attention tab's views at the
// node's step, in every kind, with the Attention tab's focused head and look. Tells the tree which node it draws
// (tree.mjs rings it).

import {attentionViews} from "../core/views.mjs";
import {Decoding} from "../assets/decoding.mjs";
import {el, root} from "../assets/dom.mjs";
import {onMadeHere} from "../assets/here.mjs";
import {HYPOTHESIS} from "./in_page.mjs";
import {PICKED_EVENT} from "./tree.mjs";

const EMPTY = "Click a node of the tree to see its hypothesis's attention here.";

/** The line above the views: the hypothesis (`message`: its text, step, total and state) and what to do with it. */
export function hypothesisLine(message) {
  if (!message.step) return "The start token: nothing written yet. Click a later node.";
  const total = message.total.toFixed(3).replace("-", "−");
  return `The hypothesis “${message.text}” (${message.state}, total log p ${total}): its attention at step `
    + `${message.step}, where it wrote its last token. Decode on from it with the buttons above.`;
}

export function mount({element, props, watch: watchProp}) {
  const box = root(element);
  const line = el("div", "beam-hypothesis-line"), views = el("div", "beam-hypothesis-views attention-view");
  box.replaceChildren(line, views);
  let decoding = null, step = 0;
  const redraw = attentionViews(views, {decoding: () => decoding, shown: () => step, empty: EMPTY, compact: true});
  const receive = (value = props.value) => {
    const node = value && value.op === "hypothesis" && value.node !== null ? value.node : null;
    [decoding, step] = node === null ? [null, 0] : [new Decoding(value.data), value.step];
    line.textContent = decoding ? hypothesisLine(value) : "";
    redraw();
    if (node !== null) document.dispatchEvent(new CustomEvent(PICKED_EVENT, {detail: {node}}));
  };
  watchProp("value", () => receive());
  receive();
  onMadeHere(HYPOTHESIS, receive); // made in the page
}
