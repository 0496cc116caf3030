// The explanation tabs' messages made in the page (each tab's in_page.mjs, its `made(model, run, asked)`, over the
// copy's explanations' graphs: attention_lab/page_copy/analyses.py), run in Node on the runtime the page carries,
// for the tests to compare with the server's (tests/test_explain_in_page.py):
//   node tests/js/explain_in_page.mjs DIR REQUEST.json > ANSWER.json
// DIR: a page copy (page_copy/copies.py). REQUEST: {here: what the app tells the page of the tabs it computes
// (page/frame.py in_page: their ids, their texts), cases: [{ids, tokens, ablated: [[kind, layer, head]...], key,
// tabs: {TAB: what the tab is asked (its own controls), ...}, more: what else the page's run holds}], copies: other
// models' copies by name, for a tab that reads two}: TAB a tab's id (its in_page.mjs `made`), or
// its id and one of its module's functions (why/decoderLens). ANSWER: per case, {TAB: the tab's message}; on
// standard error, {took: per case, {TAB: milliseconds}}.

import fs from "node:fs";
import path from "node:path";
import {LAB, loadCopy} from "./page_copy.mjs";

const [dir, requestFile] = process.argv.slice(2);
const model = await loadCopy(dir);
const {graphFile} = await import(path.join(LAB, "page_copy/model.mjs"));
const graphs = (name) => [name, new Uint8Array(fs.readFileSync(path.join(dir, graphFile(name))))];
model.loadAnalyses(Object.fromEntries(model.config.analyses.map(graphs))); // the tabs' own
const request = JSON.parse(fs.readFileSync(requestFile, "utf8"));
const here = await import(path.join(LAB, "assets/here.mjs"));
here.declare(request.here); // what the app tells the page
if (request.copies) { // other models' copies, by name (Two models' side B), each loaded once as it is asked for
  const loaded = new Map();
  here.offerCopies({has: (name) => name in request.copies, load: (name) => {
    if (!loaded.has(name)) loaded.set(name, loadCopy(request.copies[name]));
    return loaded.get(name);
  }});
}
const makers = {}; // TAB: the tab's in_page.mjs `made`; TAB/NAME: its function NAME (why/decoderLens)
for (const {tabs} of request.cases) {
  for (const tab of Object.keys(tabs)) {
    const [folder, name = "made"] = tab.split("/");
    makers[tab] ??= (await import(path.join(LAB, folder, "in_page.mjs")))[name];
  }
}
const answers = [], took = []; // took: per case, each tab's milliseconds (benchmarks/explain_hub.py reads them)
for (const {ids, tokens, ablated, key, tabs, more} of request.cases) {
  const run = {ids, tokens, ablated, key, ...more}, answer = {}, ms = {};
  for (const [tab, asked] of Object.entries(tabs)) {
    const began = performance.now();
    answer[tab] = await makers[tab](model, run, asked);
    ms[tab] = performance.now() - began;
  }
  answers.push(answer);
  took.push(ms);
}
process.stdout.write(JSON.stringify(answers));
process.stderr.write(JSON.stringify({took}) + "\n");
