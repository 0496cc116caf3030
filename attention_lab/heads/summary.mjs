// The Heads tab's summary of this sentence's every head, drawn as every summary is (attention/grids.mjs), with the
// same click-to-focus.

import {summaryView} from "../attention/grids.mjs";

export const mount = summaryView("This sentence");
