// survey.html: the pruning curves and every head over the corpus, drawn on a page with no server from the survey
// attention_lab/survey/report.py inlines (with this module, the modules it imports and plotly.js).

import {escapeToken} from "../assets/labels.mjs";
import {draw} from "../assets/plot.mjs";
import {summaryElement, summaryGrid} from "../core/grids.mjs";

const COLOURS = {all: "#222222", encoder: "#1f77b4", decoder_self: "#2ca02c", cross: "#d62728"};
const NAMES = {all: "all heads", encoder: "encoder self heads only", decoder_self: "decoder self heads only",
  cross: "cross heads only"};

/** The score against the share of heads pruned, least needed first: over all heads, and each kind alone. */
export function pruningFigure(survey) {
  const name = escapeToken(survey.score.name);
  const lines = {all: survey.pruning, ...survey.pruning_by_kind};
  const data = Object.entries(lines).map(([kind, points]) => {
    const total = points[points.length - 1].heads || 1;
    return {type: "scatter", mode: "lines+markers", name: `${NAMES[kind]} (${total})`,
      x: points.map((p) => Math.round(1000 * p.heads / total) / 10), y: points.map((p) => p.score),
      customdata: points.map((p) => p.heads), line: {color: COLOURS[kind], width: kind === "all" ? 3 : 2},
      hovertemplate: `%{customdata} heads pruned (%{x}%)<br>${name} %{y:.2f}<extra>${NAMES[kind]}</extra>`};
  });
  return {data, layout: {title: {text: `Pruning heads least needed first: ${escapeToken(survey.model)}, `
    + `${survey.sentences} sentences`, font: {size: 13}, x: 0, xanchor: "left"}, height: 360,
  margin: {l: 55, r: 10, t: 50, b: 50}, xaxis: {title: {text: "heads pruned (%)"}, range: [-2, 102], dtick: 10},
  yaxis: {title: {text: name}, rangemode: "tozero"}, plot_bgcolor: "white", legend: {orientation: "h", y: -0.22},
  hovermode: "closest"}};
}

/** Draw `state` ({survey, grid}: the survey and its head grid, survey/data.py) into #pruning and #heads. */
export function start(state) {
  draw(document.getElementById("pruning"), pruningFigure(state.survey));
  const heads = document.getElementById("heads");
  heads.replaceChildren(summaryElement(summaryGrid(state.grid, heads.clientWidth || undefined)));
}
