// The offline HTML export: the app's own views (Show step and the output, what the model looked at, the candidates,
// the Attention tab) mounted on a page with no server, on the decoding the export holds, as the page looked when it
// was exported. attention_lab/export/lesson.py inlines this, the modules it imports and plotly.js.

import {mount as candidates} from "../decoding/candidates.mjs";
import {mount as now} from "../decoding/looked_at.mjs";
import {mount as steps} from "../decoding/steps.mjs";
import {mount as views} from "../core/views.mjs";
import {receive, setKind, setLook, setNames} from "../assets/store.mjs";

const none = () => {};
export const PARTS = ["lab-steps", "now", "candidates", "views"]; // each a <div data-part="..."> of the page

function part(root, name) {
  const element = root.querySelector(`[data-part="${name}"]`);
  const inner = document.createElement("div");
  inner.className = "lab-drawn";
  element.replaceChildren(inner);
  return {element, props: {value: null}, watch: none, trigger: none};
}

/** Draw the export's decoding in `root` (the page, or a notebook's output cell): `state` is a Lesson {decoding,
 * shown, kind, look, names} (attention_lab/export/lesson.py). Each page or cell runs its own copy of the modules,
 * so each holds its own. */
export function start(state, root = document) {
  (root.body || root).classList.add("lab-offline"); // no server to ask: what asks one is hidden (lesson.css)
  setNames(state.names);
  steps(part(root, "lab-steps"));
  now(part(root, "now"));
  candidates(part(root, "candidates"));
  views(part(root, "views"));
  setKind(state.kind);
  setLook(state.look);
  receive({op: "full", key: {serial: 0, version: 0}, shown: state.shown, data: state.decoding});
}
