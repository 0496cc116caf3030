// The page's address: a link opens the lab on a tab, with a model and a source decoded
// (?tab=flow&model=de-en&source=Das+ist+ein+Haus.); the address bar keeps the open tab and the model, and the Link
// button in the header copies the link of what the page shows, its source included.
// The app opens on its first example; a link then does what a person would: picks the model, types the source,
// presses Run and opens the tab. The live page (export/live.mjs) reads the same address.

import {el, openTab, openTabId, root} from "./dom.mjs";
import {page, watch} from "./store.mjs";

export const PARAMS = ["tab", "model", "source"];
const WAIT_MS = 30000;
let opening = null; // the model and source a link asks for, until the page has written them (opened)

/** What an address asks for, checked against what the page has (`known`: {models, tabs}): {tab, model, source}
 * (null where it asks for nothing or for what is not here) and one line per thing it asked for in vain. */
export function asked(search, known) {
  const params = new URLSearchParams(search);
  const wanted = {tab: null, model: null, source: null, problems: []};
  const tab = params.get("tab"), model = params.get("model"), source = params.get("source");
  if (tab !== null && tab !== "") {
    if (known.tabs.includes(tab)) wanted.tab = tab;
    else wanted.problems.push(`No tab “${tab}” here (the tabs: ${known.tabs.join(", ")}).`);
  }
  if (model !== null && model !== "") {
    if (known.models.includes(model)) wanted.model = model;
    else wanted.problems.push(`No model “${model}” here (the models: ${known.models.join(", ")}).`);
  }
  if (source !== null && source.trim() !== "") wanted.source = source;
  return wanted;
}

/** `href` with the tab, model and source of `shown` set (a null or empty one left out), every other parameter kept
 * (presenter mode, the road). */
export function linkOf(href, shown) {
  const address = new URL(href);
  for (const name of PARAMS) {
    const value = shown[name];
    if (value === null || value === undefined || value === "") address.searchParams.delete(name);
    else address.searchParams.set(name, value);
  }
  return address.href;
}

const modelValue = () => document.querySelector("#lab-model input")?.value ?? null;
const sourceBox = () => document.querySelector("#lab-source textarea");

/** What the page shows now: the open tab, the model chosen, and the source (as typed). */
export function showing() {
  return {tab: openTabId(), model: modelValue(), source: sourceBox()?.value ?? null};
}

/** The link of what the page shows: this address with its tab, model and source. */
export function link() {
  return linkOf(globalThis.location.href, showing());
}

/** Keep the address bar on what the page shows, without its source: the tab and the model, and a link's source only
 * while it is still the page's (gradio sends the address with every request; the source goes out in the link alone).
 * No new history entry: Back leaves the lab. */
export function keepAddress() {
  const shown = showing();
  const asked = new URLSearchParams(globalThis.location.search).get("source");
  const now = linkOf(globalThis.location.href, {...shown, source: asked === shown.source ? asked : null});
  if (now !== globalThis.location.href) globalThis.history.replaceState(null, "", now);
  return now;
}

function until(ready, ms = WAIT_MS) {
  return new Promise((resolve, reject) => {
    const started = Date.now();
    const check = () => {
      if (ready()) resolve();
      else if (Date.now() - started > ms) reject(new Error("the page did not answer in time"));
      else setTimeout(check, 50);
    };
    check();
  });
}

/** Open what `wanted` asks for, as a person would: the tab; once the opening example is drawn, the model and the source
 * (written through gradio by the component's "open" event: the page's own listener, no request), then Run, then
 * the tab. */
async function follow(wanted, trigger) {
  const model = wanted.model ?? modelValue();
  const source = wanted.source ?? sourceBox()?.value ?? "";
  if (model !== modelValue() || source !== sourceBox()?.value) {
    await until(() => page.decoding !== null);
    const switching = model !== modelValue();
    opening = {model, source};
    trigger("open");
    await until(() => modelValue() === model && sourceBox()?.value === source);
    // another model: its answer first (the run of the model before dropped, its views cleared), so that Run
    // decodes with the model chosen
    if (switching) await until(() => page.decoding === null);
    document.querySelector("#lab-run")?.click();
  }
  if (wanted.tab) openTab(wanted.tab);
}


/** The model and source a link asks for, for the component's "open" listener (attention_lab.page.frame). */
export function opened() {
  return [opening.model, opening.source];
}

export function mount({element, props, trigger}) {
  const known = props.value || {models: [], tabs: []};
  const box = root(element);
  const wanted = asked(globalThis.location.search, known);
  box.replaceChildren(...(wanted.problems.length ? [el("div", "lab-address-problem", wanted.problems.join(" "))] : []));
  // `go`: follow another address in this page, as if it had been opened (the tests, a script at the console)
  const go = (search) => follow(asked(search, known), trigger);
  globalThis.attentionLabAddress = {opened, showing, keepAddress, link, go};
  const follows = wanted.tab || wanted.model || wanted.source ? follow(wanted, trigger) : Promise.resolve();
  follows.catch((err) => box.append(el("div", "lab-address-problem", `The link could not be followed: ${err.message}`)))
    .finally(() => {
      // from now on the address follows the page: a new decoding (its model and source) and each tab opened
      watch((what) => (what === "decoding" ? keepAddress() : null));
      document.querySelector("#lab-tabs")?.addEventListener("click", (event) => {
        if (event.target.closest("button[role=tab]")) setTimeout(keepAddress, 0);
      });
      keepAddress();
    });
}
