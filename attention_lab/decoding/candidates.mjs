// The shown step's next-token candidates: a bar per token with its probability; the token written is marked. A
// click on another asks the server to force it at this step and decode on (what if?).

import {el, root} from "../assets/dom.mjs";
import {percent} from "../assets/look.mjs";
import {page, watch} from "../assets/store.mjs";

export const LABEL = "Next-token probabilities. What if? Click another candidate to force it here and decode on";

export function renderCandidates(container, decoding, shown) {
  const list = el("div", "candidates");
  container.replaceChildren(list);
  if (!shown) return;
  const step = decoding.steps[shown - 1];
  for (const [label, id, prob] of step.top) {
    const row = el("button", "candidate" + (id === step.token ? " taken" : ""));
    row.type = "button";
    row.dataset.token = String(id);
    const bar = el("span", "bar");
    bar.style.width = `${(100 * prob).toFixed(1)}%`;
    row.append(bar, el("span", "label", label), el("span", "value", percent(prob)));
    list.appendChild(row);
  }
}

export function mount({element, trigger}) {
  const box = root(element);
  const body = el("div", "lab-candidates");
  box.replaceChildren(el("div", "lab-label", LABEL), body);
  const draw = () => (page.decoding ? renderCandidates(body, page.decoding, page.shown) : body.replaceChildren());
  box.addEventListener("click", (event) => {
    const candidate = event.target.closest(".candidate[data-token]");
    if (candidate && !candidate.classList.contains("taken")) {
      trigger("select", {token: Number(candidate.dataset.token), shown: page.shown});
    }
  });
  watch((what) => (what === "decoding" || what === "shown" ? draw() : null));
  draw();
}
