// The DecoderLens (Langedijk et al. 2024): what the whole decoder writes when it reads an earlier encoder layer's
// output in place of the last one's, layer 0 being the embeddings. The server sends it once per source, model, limit
// and interventions (attention_lab/why/feature.py: a Step does not send it again); it is drawn here as a table, one
// row per encoder layer, the last marked as the model's own output and every earlier one that writes the same tokens
// marked so. While the page makes the Why tab's message, it makes this one too (in_page.mjs decoderLens). Not the lens above it, which reads each decoder layer at each step.

import {el, root} from "../assets/dom.mjs";
import {slowView} from "../assets/slow.mjs";

export const DECODERLENS_TITLE = "The DecoderLens: what the decoder writes from each encoder layer";
export const DECODERLENS_NOTE = "Each row: the decoder reads that encoder layer's output in place of the last one's "
  + "(through the encoder's closing norm) and writes greedily; layer 0 is the embeddings. The lens above reads the "
  + "decoder's layers instead.";

/** What the table shows for the server's `message`: null for nothing to draw, {error}, or {rows, settled}: per
 * layer its name, text, tokens and mark; settled is the first layer from which on every layer writes the model's
 * output (the last layer's tokens). */
export function decoderLensRows(message) {
  if (!message || message.op !== "decoderlens") return null;
  if (message.error) return {error: message.error};
  const layers = message.layers, L = layers.length - 1;
  if (L < 0) return null;
  const same = (a, b) => a.tokens.length === b.tokens.length && a.tokens.every((t, i) => t === b.tokens[i]);
  const asOutput = layers.map((layer) => same(layer, layers[L]));
  let settled = L;
  while (settled > 0 && asOutput[settled - 1]) settled--;
  const rows = layers.map((layer, i) => ({
    name: layer.layer === 0 ? "0 (embeddings)" : String(layer.layer),
    text: layer.text || "∅",
    tokens: layer.tokens.join(" · "),
    mark: i === L ? "the model's output" : asOutput[i] ? "same as the output" : "",
    more: layer.ended ? "" : ` … (no end within ${message.limit} tokens)`,
  }));
  return {rows, settled: layers[settled].layer};
}

/** The table (or the error) into `container`. */
export function renderDecoderLens(container, state) {
  const view = el("div", "why-decoderlens-view");
  container.replaceChildren(view);
  view.append(el("div", "why-decoderlens-title", DECODERLENS_TITLE));
  if (state.error) {
    view.append(el("div", "why-note", state.error));
    return;
  }
  const table = el("table", "why-decoderlens-table"), head = el("tr");
  head.append(el("th", "", "Encoder layer"), el("th", "", "The decoder writes"));
  table.append(head);
  for (const row of state.rows) {
    const line = el("tr", row.mark === "the model's output" ? "why-decoderlens-own" : "");
    const writes = el("td", "why-decoderlens-writes");
    writes.title = row.tokens; // the tokens, as the step loop labels them
    writes.append(el("span", "why-decoderlens-text", row.text + row.more));
    if (row.mark) writes.append(el("span", "why-decoderlens-mark", row.mark));
    line.append(el("td", "why-decoderlens-layer", row.name), writes);
    table.append(line);
  }
  const settled = `From encoder layer ${state.settled} on, the decoder writes the model's own output.`;
  view.append(table, el("div", "why-note", `${settled} ${DECODERLENS_NOTE}`));
}

export function mount(component) {
  const box = root(component.element);
  slowView(component, box, ({message, computing}) => {
    const state = computing ? null : decoderLensRows(message);
    if (state) renderDecoderLens(box, state);
    else if (computing) box.replaceChildren(el("div", "why-busy", computing));
    else box.replaceChildren();
  }, {on: () => false, here: "decoderlens"}); // the page's step, kind and look do not change it; made in the page
  // with the Why tab's message (why.mjs), when the page makes that
}
