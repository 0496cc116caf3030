// The step loop's strip: Show step (a slider, 0 to the last step) and the output a token a step, the shown one
// marked; a click on a token shows its step. The server's messages about the decoding arrive as this component's
// value and go to the page's state (assets/store.mjs), which every view draws from.

import {el, root} from "../assets/dom.mjs";
import {page, receive, show, steps, watch} from "../assets/store.mjs";

export function mount({element, props, watch: watchProp}) {
  const box = root(element);
  const range = Object.assign(el("input"), {type: "range", id: "lab-shown", min: 0, max: 0, step: 1, value: 0});
  const name = Object.assign(el("label", "lab-control-name", "Show step"), {htmlFor: "lab-shown"});
  const count = el("span", "steps-count");
  const tokens = el("div", "steps-tokens");
  tokens.setAttribute("aria-label", "Tokens written, one a step");
  const row = el("div", "steps-row");
  row.append(name, range, count);
  box.replaceChildren(row, tokens);
  range.title = "← → move a step, Home and End the first and last (with no text box focused)";
  range.addEventListener("input", () => show(range.value));
  tokens.addEventListener("click", (event) => {
    const token = event.target.closest("[data-step]");
    if (token) show(Number(token.dataset.step));
  });

  const mark = () => {
    range.value = page.shown;
    count.textContent = `${page.shown} / ${steps()}`;
    for (const token of tokens.children) token.classList.toggle("current", Number(token.dataset.step) === page.shown);
  };
  const fill = () => {
    const d = page.decoding, n = steps();
    range.max = n;
    range.disabled = n === 0;
    tokens.replaceChildren(
      ...(d ? d.steps : []).map((step, i) => {
        const token = el("button", "token" + (step.forced ? " forced" : ""), d.out.labels[i] || "∅");
        token.type = "button";
        token.dataset.step = String(i + 1);
        token.title = `step ${i + 1}${step.forced ? ", forced by a what-if" : ""}`;
        return token;
      }),
    );
    mark();
  };
  watch((what) => (what === "decoding" ? fill() : what === "shown" ? mark() : null));
  watchProp("value", () => receive(props.value));
  if (props.value) receive(props.value); // sent before this module was loaded
  fill();
}
