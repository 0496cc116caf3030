// The Heads tab's survey over a corpus, drawn as this sentence's summary is (heads/summary.mjs), with the same
// click-to-focus.

import {el, onVisible, root} from "../assets/dom.mjs";
import {drawSummary} from "../heads/summary.mjs";

export function mount({element, props, watch}) {
  const box = root(element);
  const figure = el("div", "summary-figure");
  box.replaceChildren(el("div", "lab-label", "Over the corpus"), figure);
  const redraw = () => drawSummary(figure, props.value);
  watch("value", redraw);
  onVisible(figure, redraw);
  redraw();
}
