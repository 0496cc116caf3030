// The Heads tab's survey over a corpus, drawn as this sentence's summary is (core/grids.mjs), with the same
// click-to-focus; the page shows the survey its copy carries (in_page.mjs) with no request, until a survey.json is
// chosen, which the server reads.

import {askAgain, computesHere} from "../assets/here.mjs";
import {summaryView} from "../core/grids.mjs";
import {carried, choose, made} from "./in_page.mjs";

computesHere("survey", made, carried, () => null, true); // drawn with or without a decoding
globalThis.document?.addEventListener("change", (event) => {
  if (!event.target.closest?.("#survey-file")) return;
  choose();
  askAgain("survey");
}, true);

export const mount = summaryView("Over the corpus", "survey");
