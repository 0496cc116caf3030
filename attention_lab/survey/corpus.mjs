// The Heads tab's survey over a corpus, drawn as this sentence's summary is (heads/summary.mjs), with the same
// click-to-focus.

import {summaryView} from "../heads/summary.mjs";

export const mount = summaryView("Over the corpus");
