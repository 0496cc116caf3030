// The shown step's next-token candidates: a bar per token with its probability; the token written is marked. A
// click on another forces it at this step and decodes on (what if?), in the page or on the server; its "why not
// this?" asks why the model wrote its token and not that one, drawn in the Why tab (why/contrast.mjs), which it opens.

import {el, openTab, root} from "../assets/dom.mjs";
import {percent} from "../assets/style.mjs";
import {page, watch} from "../assets/store.mjs";

export const LABEL = "Next-token probabilities. What if? Click another candidate to force it here and decode on";
export const WHY_NOT = "why not this?";
export const WHY_NOT_EVENT = "attention-lab-why-not"; // on document, {detail: {step, token}}: a contrast was asked
// On document, {detail: {token, shown}}, cancelable: a what-if was asked; the page's own step loop (road.mjs) takes
// it by cancelling the event, else it goes to the server.
export const WHAT_IF_EVENT = "attention-lab-what-if";

export function renderCandidates(container, decoding, shown) {
  const list = el("div", "candidates");
  container.replaceChildren(list);
  if (!shown) return;
  const step = decoding.steps[shown - 1];
  for (const [label, id, prob] of step.top) {
    const taken = id === step.token;
    const row = el("button", "candidate" + (taken ? " taken" : ""));
    row.type = "button";
    row.dataset.token = String(id);
    const bar = el("span", "bar");
    bar.style.setProperty("--share", prob.toFixed(3)); // its width (decoding.css)
    row.append(bar, el("span", "label", label), el("span", "value", percent(prob)));
    const why = el(taken ? "span" : "button", "why-not" + (taken ? " none" : ""), WHY_NOT);
    if (taken) why.setAttribute("aria-hidden", "true"); // keeps the rows' bars in line
    else {
      why.type = "button";
      why.dataset.alternative = String(id);
      why.title = `Why ${step.label} and not ${label}? (the Why tab)`;
    }
    const line = el("div", "candidate-row");
    line.append(row, why);
    list.appendChild(line);
  }
}

export function mount({element, trigger}) {
  const box = root(element);
  const body = el("div", "lab-candidates");
  box.replaceChildren(el("div", "lab-label", LABEL), body);
  const draw = () => (page.decoding ? renderCandidates(body, page.decoding, page.shown) : body.replaceChildren());
  box.addEventListener("click", (event) => {
    const why = event.target.closest(".why-not[data-alternative]");
    if (why) {
      const token = Number(why.dataset.alternative);
      trigger("click", {alternative: token, shown: page.shown});
      document.dispatchEvent(new CustomEvent(WHY_NOT_EVENT, {detail: {step: page.shown, token}}));
      openTab("why"); // where the contrast is drawn
      return;
    }
    const candidate = event.target.closest(".candidate[data-token]");
    if (candidate && !candidate.classList.contains("taken")) {
      const detail = {token: Number(candidate.dataset.token), shown: page.shown};
      if (document.dispatchEvent(new CustomEvent(WHAT_IF_EVENT, {detail, cancelable: true}))) trigger("select", detail);
    }
  });
  watch((what) => (what === "decoding" || what === "shown" ? draw() : null));
  draw();
}
