// The live page's entry (export/live.py): its step loop and Attention tab (export/live.mjs), carrying the tabs whose
// messages the page makes itself (attention_lab/tabs.py: each Feature with in_page), each by its id, which the page
// mounts in its row of tabs. tests/test_live_tabs.py holds this list equal to the table's.

import * as flow from "./flow/flow.mjs";
import * as trust from "./trust/trust.mjs";
import {carry} from "./export/live.mjs";

carry({flow, trust});

export * from "./export/live.mjs";
