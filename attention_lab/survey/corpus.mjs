// The Heads tab's survey over a corpus, drawn as this sentence's summary is (attention/grids.mjs), with the same
// click-to-focus.

import {summaryView} from "../attention/grids.mjs";

export const mount = summaryView("Over the corpus");
