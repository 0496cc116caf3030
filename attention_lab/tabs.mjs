// The live page's entry (export/live.py): its step loop and Attention tab (export/live.mjs), carrying the tabs whose
// messages the page makes itself (attention_lab/tabs.py: each Feature with in_page), each by its id, which the page
// mounts in its row of tabs. tests/test_browser_live.py opens each of them, from disk with no network.

import {el} from "./assets/dom.mjs";
import * as hypothesis from "./beam_tree/hypothesis.mjs";
import * as tree from "./beam_tree/tree.mjs";
import * as beams from "./beams/beams.mjs";
import * as flow from "./flow/flow.mjs";
import * as summary from "./heads/summary.mjs";
import * as patch from "./patch/patch.mjs";
import * as corpus from "./survey/corpus.mjs";
import * as film from "./training/film.mjs";
import * as trust from "./trust/trust.mjs";
import * as pair from "./two_models/two_models.mjs";
import * as attribution from "./why/why.mjs";
import * as decoderLens from "./why/decoderlens.mjs";
import {carry} from "./export/live.mjs";

// the Why tab's attribution and lens, then its DecoderLens, in one panel (the app draws them as two components)
const why = {
  mount(component) {
    const [top, below] = [document.createElement("div"), document.createElement("div")];
    component.element.replaceChildren(top, below);
    attribution.mount({...component, element: top});
    decoderLens.mount({...component, element: below});
  },
};

/** A tab's module drawn with one line under it: what the app's tab does besides, on its server. */
function withNote(module, said) {
  return {
    mount(component) {
      const [top, note] = [document.createElement("div"), document.createElement("p")];
      note.className = "note";
      note.textContent = said;
      component.element.replaceChildren(top, note);
      module.mount({...component, element: top});
    },
  };
}

const heads = withNote(summary, "Ablating chosen heads and editing attention need the app's server: this page summarises every head.");
// the Beam tree, its buttons to decode on from the node clicked, and that node's hypothesis (beam_tree/in_page.mjs
// answers both, as in the app)
const beamTree = {
  mount(component) {
    const [top, buttons, below] = [el("div"), el("div", "beam-tree-buttons live-buttons"), el("div")];
    for (const [id, text] of [["beam-tree-greedy", "Decode on from here, greedily"],
      ["beam-tree-beam-on", "Decode on from here, by beam search"]]) {
      buttons.append(Object.assign(el("button", "lab-button", text), {type: "button", id}));
    }
    [top.id, below.id] = ["beam-tree", "beam-hypothesis"]; // as the app's
    component.element.replaceChildren(top, buttons, below);
    tree.mount({...component, element: top});
    hypothesis.mount({...component, element: below});
  },
};

const twoModels = withNote(pair, "Side B writing A's words, and a training snapshot as side B, need the app's server: this page compares its own models.");

carry({beams, beam_tree: beamTree, flow, heads, patch, survey: corpus, training: film, trust, two_models: twoModels, why});

export * from "./export/live.mjs";
