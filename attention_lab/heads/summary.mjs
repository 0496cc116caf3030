// The Heads tab's summary of this sentence's every head, drawn as every summary is (core/grids.mjs), with the
// same click-to-focus. While the page decodes, the page makes it (in_page.mjs `made`: from the weights it holds and
// the copy's ablations graph), and Ablate and its effects (ablate.mjs, in_page.mjs `effects`); editing is the
// server's.

import {computesHere, madeHere} from "../assets/here.mjs";
import {summaryView} from "../core/grids.mjs";
import "./ablate.mjs";
import {effects, made} from "./in_page.mjs";

computesHere("heads", async (model, run) => {
  madeHere("effects", await effects(model, run)); // first: one pass, where the summary measures every head
  return made(model, run);
});
export const mount = summaryView("This sentence", "heads");
