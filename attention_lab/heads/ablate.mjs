// Ablate made in the page (heads/actions.py HeadTests.ablate): while the page decodes and draws the Heads tab, a
// click on Ablate decodes again with the chosen heads removed throughout, in the page's own step loop
// (decoding/loop.mjs `ablate`), with no request; what that changed at each step is made with the tab's summary
// (in_page.mjs `effects`). Otherwise, or for a choice the page cannot read, the click goes to the server.

import {pyFormat} from "../assets/format.mjs";
import {textsOf} from "../assets/here.mjs";
import {describeHeads, parseHeads} from "../assets/naming.mjs";

let chosen = []; // the "Heads to ablate" as chosen (heads/feature.py CHOSEN tells them as they change)

/** run/state.py interventions_status of an ablation of `heads` ([kind, layer, head], 0-based) of the model `c`. */
export function holding(heads, c) {
  const t = textsOf("heads"), said = pyFormat(t.ablated, {heads: describeHeads(heads, c, t.heads, t.kinds)});
  return heads.length ? pyFormat(t.holding, {held: said[0].toUpperCase() + said.slice(1)}) : "";
}

if (!globalThis.attentionLabHeads && globalThis.document) {
  globalThis.attentionLabHeads = {chose: (heads) => (chosen = [heads ?? []].flat())};
  document.addEventListener("click", (event) => {
    const button = event.target.closest?.("#heads-ablate"), road = globalThis.attentionLabRoad;
    if (!button || button.disabled || !road || road.passing) return;
    const loop = road.taker("ablate"), heads = loop && parseHeads(chosen, loop.model.config);
    if (!heads) return;
    event.preventDefault();
    event.stopImmediatePropagation();
    road.answer(loop, "ablate", () => road.pass(button), heads, holding(heads, loop.model.config));
  }, true);
}
