// The Heads tab's summary of this sentence's every head, drawn as every summary is (core/grids.mjs), with the
// same click-to-focus. While the page decodes, the page makes it (in_page.mjs `made`: from the weights it holds and
// the copy's ablations graph); Ablate, its effects and editing are the server's.

import {computesHere} from "../assets/here.mjs";
import {summaryView} from "../core/grids.mjs";
import {made} from "./in_page.mjs";

computesHere("heads", made);
export const mount = summaryView("This sentence", "heads");
