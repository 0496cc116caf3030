// The page's step loop (attention_lab/decoding/loop.mjs) run in Node on a model's page copy, as the app's page runs
// it, for tests/test_road.py to compare with the server's own step loop:
//   node tests/js/loop_decode.mjs DIR REQUEST.json > ANSWER.json
// DIR is a page copy (page_copy/copies.py). REQUEST: {scenarios: [{source, top_k, max_len, ablate, actions}]} (ablate:
// the heads switched off, [kind, layer, head] 0-based), each action
// ["run"], ["step"], ["back"], ["reset"], ["source", text] (the Source typed anew), ["beam", k] or ["greedy"] (the
// strategy chosen), ["what-if", rank, shown] (the candidate of that rank at step `shown`, as a click on it) or
// ["ablate", heads] (heads chosen as "kind:layer:head", then Ablate) or ["tree", beam, node, strategy] (node number
// `node`, modulo the tree's size, of the Beam tree searched with beam size `beam`, clicked, then "Decode on from
// here" by `strategy`). ANSWER: per scenario, what the page would send the server (the loop's `decoded`), what it
// shows (its key, the step shown, every step's token and whether it was forced), the loop's outputs, the one-line
// messages it said, the Beams tab's table and each clicked node's hypothesis.

import fs from "node:fs";
import path from "node:path";
import {LAB, loadCopy} from "./page_copy.mjs";

const {Loop} = await import(path.join(LAB, "decoding/loop.mjs"));
const {page, receive} = await import(path.join(LAB, "assets/store.mjs"));
const {declare} = await import(path.join(LAB, "assets/here.mjs"));
const {parseHeads} = await import(path.join(LAB, "assets/naming.mjs"));
const {holding} = await import(path.join(LAB, "heads/ablate.mjs"));
const beams = await import(path.join(LAB, "beams/in_page.mjs"));
const beamTree = await import(path.join(LAB, "beam_tree/in_page.mjs"));
const {textsOf} = await import(path.join(LAB, "assets/here.mjs"));
declare(JSON.parse(fs.readFileSync(path.join(LAB, "assets/in_page.json"), "utf8"))); // the texts the app sends

const [dir, requestFile] = process.argv.slice(2);
const model = await loadCopy(dir);
const request = JSON.parse(fs.readFileSync(requestFile, "utf8"));

async function play({source, top_k = 8, max_len = null, ablate = [], actions}) {
  receive({op: "clear", key: null, shown: 0});
  page.serial = 0; // each scenario is a page of its own, as the server's is a session of its own
  const said = [], hypotheses = [];
  let text = source, outputs = null, mode = {strategy: "greedy", beamSize: 4};
  const ui = {
    source: () => text,
    options: () => ({topK: top_k, maxNew: max_len, ...(ablate.length ? {ablated: ablate} : {})}),
    search: () => mode,
    wrote: (o) => (outputs = o),
    say: (line, error) => (line ? said.push([line, Boolean(error)]) : null),
  };
  const loop = new Loop(model, ui);
  for (const [action, ...args] of actions) {
    if (action === "source") text = args[0];
    else if (action === "beam") mode = {strategy: "beam", beamSize: args[0]};
    else if (action === "greedy") mode = {strategy: "greedy", beamSize: 4};
    else if (action === "what-if") {
      const [rank, shown] = args;
      const step = page.decoding.steps[shown - 1];
      const others = step.top.filter(([, id]) => id !== step.token);
      page.shown = shown;
      await loop.whatIf(others[rank][1], shown);
    } else if (action === "ablate") { // the heads chosen, as the Heads tab's menu names them, then Ablate
      const heads = parseHeads(args[0], model.config);
      await loop.ablate(heads, holding(heads, model.config));
    } else if (action === "tree") { // a node of the tree clicked, then "Decode on from here"
      const [beam, number, strategy] = args, s = loop.session, ablated = loop.options.ablated ?? [];
      const {tree} = await beamTree.searched(model, beamTree.searchRun(s, ablated), beam);
      const node = number % tree.nodes.length;
      hypotheses.push(await beamTree.hypothesis(model, s, ablated, beam, node));
      const branch = async () => ({path: beamTree.pathOf(tree, node), shown: Math.max(1, tree.nodes[node].step), beamSize: beam});
      await loop.decodeOn(branch, strategy, textsOf("beam_tree").change);
    } else await loop[action]();
  }
  const d = page.decoding;
  return {
    decoded: loop.decoded(),
    key: page.key,
    shown: page.shown,
    tokens: d ? d.steps.map((s) => s.token) : [],
    forced: d ? d.steps.map((s) => s.forced) : [],
    outputs,
    said,
    search: loop.found && loop.beamed ? {tokens: loop.found.tokens, score: loop.found.score} : null,
    beams: beams.made(model, {beams: loop.beamed ? loop.found.history : null}), // the Beams tab's table
    hypotheses,
  };
}

const answers = [];
for (const scenario of request.scenarios) answers.push(await play(scenario));
process.stdout.write(JSON.stringify({scenarios: answers}));
