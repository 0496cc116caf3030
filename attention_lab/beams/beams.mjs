// The Beams tab: the live beams after each step of the beam search, a row each (step, rank, hypothesis, log-prob),
// from the server's table or the page's own (in_page.mjs).

import {computesHere, textsOf} from "../assets/here.mjs";
import {el, root} from "../assets/dom.mjs";
import {slowView} from "../assets/slow.mjs";
import {made} from "./in_page.mjs";

computesHere("beams", async (model, run) => made(model, run));

function drawTable(box, message) {
  const label = el("div", "lab-label", textsOf("beams").label ?? "");
  if (!message || message.op !== "beams") {
    box.replaceChildren(label, el("p", "beams-none", message?.text ?? ""));
    return;
  }
  const table = el("table", "beams-table"), head = el("tr");
  for (const name of message.headers) head.appendChild(el("th", "", name));
  table.appendChild(el("thead")).appendChild(head);
  const body = table.appendChild(el("tbody"));
  for (const row of message.rows) {
    const line = body.appendChild(el("tr"));
    row.forEach((value, i) => line.appendChild(el("td", i === 2 ? "hypothesis" : "number", String(value))));
  }
  const scroll = el("div", "beams-scroll");
  scroll.appendChild(table);
  box.replaceChildren(label, scroll);
}

export function mount(component) {
  const box = root(component.element);
  slowView(component, box, ({message}) => drawTable(box, message), {on: () => false, here: "beams"});
}
