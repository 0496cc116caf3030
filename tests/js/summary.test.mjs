import assert from "node:assert/strict";
import {test} from "node:test";

import {short, summaryFigure} from "../../attention_lab/core/grids.mjs";
import {effectsFigure} from "../../attention_lab/heads/effects.mjs";
import {pruningFigure} from "../../attention_lab/survey/report.mjs";
import {valid} from "./messages.mjs";

const title = (fig) => fig.layout.annotations.find((a) => a.name === "title").text;
const data = valid({op: "summary", title: "<t>", kinds: ["encoder", "cross"], short: {encoder: "enc self", cross: "cross"},
  layers: 2, heads: 2, metrics: [
    {key: "entropy", name: "entropy (nats)", note: "low", colouring: "size", grids: {encoder: [[1, 2], [3, 4]], cross: [[0.5, null], [1, 1]]}},
    {key: "offset", name: "offset", note: "signed", colouring: "signed", grids: {encoder: [[-1, 1], [0, 2]], cross: [[1, 1], [1, 1]]}},
  ]});

test("a cell writes its value as its measure reads", () => {
  assert.equal(short(0.4237, "share"), "42%");
  assert.equal(short(0.00012, "size"), "1.2e-4");
  assert.equal(short(0.05, "size"), "0.050");
  assert.equal(short(1.5, "signed"), "+1.50");
  assert.equal(short(-12, "signed"), "-12");
  assert.equal(short(0, "size"), "0");
});

test("the summary: a row of grids per measure, a block per kind, each cell naming its head", () => {
  const fig = summaryFigure(data);
  assert.equal(fig.data.length, 2);
  const [entropy, offset] = fig.data;
  assert.equal(entropy.z[0].length, 2 * 3 - 1); // two blocks of two heads, a column of gap between
  assert.equal(entropy.customdata[1][4], "cross|Layer 2 · Head 2");
  assert.equal(entropy.customdata[0][4], null); // no value: no head to focus
  assert.equal(entropy.z[0][2], null);
  assert.deepEqual([offset.zmin, offset.zmax], [-2, 2]); // signed: around 0
  assert.equal(title(fig), "&lt;t&gt;");
  assert.match(fig.layout.annotations[0].text, /<b>entropy \(nats\)<\/b>: low/);
});

test("an ablation's effects: red where the top token changes, hover the ablated top 3", () => {
  const fig = effectsFigure(valid({op: "effects", held: "Ablated: x", steps: [
    {step: 1, label: "a", kl: 0.1, changed: false, top: [["a", 0.9]]},
    {step: 2, label: "<b>", kl: 2, changed: true, top: [["c", 0.5]]}]}));
  assert.deepEqual(fig.data.map((t) => t.x), [["1: a"], ["2: &lt;b&gt;"]]);
  assert.match(fig.layout.title.text, /changes at 1 of 2 steps/);
});

test("the pruning curves: the score against the share of heads pruned", () => {
  const points = [{fraction: 0, heads: 0, score: 10}, {fraction: 1, heads: 4, score: 2}];
  const fig = pruningFigure({model: "m", sentences: 3, score: {name: "BLEU", value: 10}, pruning: points,
    pruning_by_kind: {cross: points}});
  assert.deepEqual(fig.data[0].x, [0, 100]);
  assert.equal(fig.data.length, 2);
});

test("at a phone's width the notes wrap to the figure and the cells leave their values to the hover", () => {
  const long = {...data, title: "Every head, over this source's decoding without ablations or edits", metrics:
    data.metrics.map((m) => ({...m, note: "a head parked on </s> often does little, as the paper says at length"}))};
  const wide = summaryFigure(long, 900), narrow = summaryFigure(long, 200);
  assert.equal(wide.data[0].texttemplate, "%{text}");
  assert.equal(narrow.data[0].texttemplate, "");
  const lines = (fig) => fig.layout.annotations.filter((a) => a.xref === "paper" && !a.name).map((a) => a.text.split("<br>"));
  assert.ok(lines(narrow).every((note) => note.length > 1), "a long note takes several lines when narrow");
  assert.ok(lines(wide).every((note) => note.length === 1));
  const chars = Math.floor((200 - 50) / 6.2);
  for (const note of lines(narrow)) for (const line of note) assert.ok(line.replace(/<\/?b>/g, "").length <= chars + 8);
  assert.ok(narrow.layout.height > wide.layout.height); // the lines get their own room
  assert.ok(title(narrow).includes("<br>") && !title(wide).includes("<br>"));
  const kinds = narrow.layout.annotations.filter((a) => a.xref === "x").map((a) => a.text);
  assert.deepEqual(kinds, ["enc self", "cross"]);
});
