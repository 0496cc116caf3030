// The step loop's clicks and what-ifs that the page's road (in_page.mjs) answers itself, taken before gradio sees
// them: a click made while a switch of model is on its way is held for its answer; one the road's loop can take
// is answered in the page; any other goes on to gradio, and the server.

import {WHAT_IF_EVENT} from "./candidates.mjs";

const ACTIONS = {"lab-run": "run", "lab-step": "step", "lab-back": "back", "lab-reset": "reset"};

/** Take the step loop's clicks and what-ifs the road can answer, before gradio sees them. */
export function intercept(road) {
  document.addEventListener("click", (event) => {
    const button = event.target.closest?.("#lab-run, #lab-step, #lab-back, #lab-reset");
    const action = button && !button.disabled && ACTIONS[button.id];
    if (action && !road.passing && road.switching()) {
      event.preventDefault();
      event.stopImmediatePropagation();
      road.hold(button);
      return;
    }
    const loop = action && road.taker(action);
    if (!loop) return;
    event.preventDefault();
    event.stopImmediatePropagation();
    road.answer(loop, action, () => road.pass(button));
  }, true);
  document.addEventListener(WHAT_IF_EVENT, (event) => {
    const loop = road.taker("what-if");
    if (!loop) return;
    event.preventDefault();
    road.answer(loop, "whatIf", null, event.detail.token, event.detail.shown);
  });
}
