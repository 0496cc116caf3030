// What an ablation changed, per step of the decoding before it: KL(original ‖ ablated) of the next-token
// distribution with the original prefix, red where the ablated model's top token is another; hover for its top 3.

import {root} from "../assets/dom.mjs";
import {STYLE, percent} from "../assets/style.mjs";
import {escapeToken} from "../assets/labels.mjs";
import {draw, emptyFigure} from "../assets/plot.mjs";
import {slowView} from "../assets/slow.mjs";

export function effectsFigure(data) {
  const labels = data.steps.map((s) => `${s.step}: ${escapeToken(s.label)}`);
  const traces = [[false, "#6baed6", "same top token"], [true, STYLE.highlight, "top token changes"]].map(
    ([changed, colour, name]) => {
      const picked = data.steps.map((s, i) => [s, i]).filter(([s]) => s.changed === changed);
      return {type: "bar", name, marker: {color: colour}, x: picked.map(([, i]) => labels[i]), y: picked.map(([s]) => s.kl),
        customdata: picked.map(([s]) => s.top.map(([t, p]) => `${escapeToken(t)} ${percent(p)}`).join("<br>")),
        hovertemplate: "step %{x}<br>KL %{y:.3f} nats<br>ablated top 3:<br>%{customdata}<extra></extra>"};
    });
  const changed = data.steps.filter((s) => s.changed).length;
  const title = `${escapeToken(data.held)}<br>KL(original ‖ ablated) per step, original prefix: top token changes at `
    + `${changed} of ${data.steps.length} steps`;
  return {data: traces, layout: {title: {text: title, font: {size: 12}, x: 0, xanchor: "left"}, height: 300,
    margin: {l: 50, r: 10, t: 70, b: 80}, barmode: "overlay", plot_bgcolor: "white", legend: {orientation: "h", y: -0.35},
    xaxis: {type: "category", categoryorder: "array", categoryarray: labels, tickangle: -45},
    yaxis: {title: {text: "KL (nats)"}, rangemode: "tozero"}}};
}

export function mount(component) {
  const box = root(component.element);
  let drew = ""; // what was drawn: the same again (the hint, handed over at each Step) is not redrawn
  // what it says before an ablation comes with the component (heads/summary.py's NO_EFFECTS)
  slowView(component, box, ({message, computing}) => {
    const drawing = JSON.stringify([message && {...message, key: null}, computing, box.clientWidth]);
    if (drawing === drew) return;
    drew = drawing;
    draw(box, !computing && message && message.op === "effects"
      ? effectsFigure(message) : emptyFigure(computing || (message && message.text) || "", 120));
  }, {on: () => false, here: "effects"}); // made in the page with the tab's summary (summary.mjs)
}
