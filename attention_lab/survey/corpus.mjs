// The Heads tab's survey over a corpus, drawn as this sentence's summary is (core/grids.mjs), with the same
// click-to-focus.

import {summaryView} from "../core/grids.mjs";

export const mount = summaryView("Over the corpus");
