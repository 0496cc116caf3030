// The offline HTML export: the app's own views (Show step and the output, what the model looked at, the candidates,
// the Attention tab) mounted on a page with no server, on the decoding the export holds, as the page looked when it
// was exported. attention_lab/export/html.py inlines this, the modules it imports and plotly.js.

import {mount as candidates} from "../decoding/candidates.mjs";
import {mount as now} from "../decoding/now.mjs";
import {mount as steps} from "../decoding/steps.mjs";
import {mount as views} from "../attention/views.mjs";
import {receive, setKind, setLook} from "../assets/store.mjs";

const none = () => {};

function part(id) {
  const element = document.getElementById(id);
  const inner = document.createElement("div");
  inner.className = "lab-drawn";
  element.replaceChildren(inner);
  return {element, props: {value: null}, watch: none, trigger: none};
}

/** Draw the export's decoding: `state` is {decoding, shown, kind, look} (attention_lab/export/html.py). */
export function start(state) {
  steps(part("lab-steps"));
  now(part("now"));
  candidates(part("candidates"));
  views(part("views"));
  setKind(state.kind);
  setLook(state.look);
  receive({op: "full", key: "export", shown: state.shown, data: state.decoding});
}
