// The Heads tab's summary of this sentence's every head, drawn as every summary is (core/grids.mjs), with the
// same click-to-focus.

import {summaryView} from "../core/grids.mjs";

export const mount = summaryView("This sentence");
