// The tabs whose messages the page makes itself, from its copy's explanations' graph (attention_lab/page_copy/
// analyses.py): each such tab's module says how (`computesHere`: a maker from the page copy and the decoding the
// page holds to the tab's message, the one the server would send), and its view takes what is made (`onMadeHere`).
// The road (decoding/in_page.mjs) decides when the page makes them: while the page decodes and holds the decoding,
// with the tab open; else the server sends the tab's message, as before.

const makers = new Map(); // tab id -> {make: async (model, run) => message, now: () => whether it makes it now}
const views = new Map(); // tab id -> fn(message)
const latest = new Map(); // tab id -> the last message made for it (a view mounted after it takes it)
const offered = new Set(); // fn(tab): called as a tab's module says how it is made (gradio loads it with the tab)
let declared = new Set(); // the tabs the app says the page computes (attention_lab.feature.Feature.in_page)
let drawn = new Set(["attention"]); // the tabs the server sends nothing to: drawn from the page's decoding
let texts = {}; // by tab: the texts its messages carry (Feature.texts)

/** The tabs whose messages the page makes (the app's declaration: known before their modules load). */
export function hereTabs() {
  return [...declared];
}

/** Whether the page makes the messages of `tab` now: a tab the app declares, whose module has said how (gradio
 * loads it as the tab first opens: until then the server draws it, as the page cannot yet tell whether its controls
 * ask for what the server alone makes) and whose controls ask for nothing the server alone makes. */
export function computedHere(tab, model = null) {
  return declared.has(tab) && makers.has(tab) && makers.get(tab).now(model);
}

/** Whether `tab` is drawn from the decoding the page holds alone, whoever made it (the server sends it nothing). */
export function drawnFromDecoding(tab) {
  return drawn.has(tab);
}

/** Whether the module of `tab` has said how the page makes its messages (computesHere). */
export function knownHere(tab) {
  return makers.has(tab);
}

/** The tab `tab` can be drawn from the page's own computation: `make(model, run)` gives its message; `now(model)`
 * whether the page makes it with the tab's controls as they are (a method that needs the server: false);
 * `asked(model, run)` what those controls ask (a message is made again when it changes); `alone`: it reads the
 * controls alone, not the decoding (a tab the server draws with no run: feature.py needs_run False), so the page
 * makes it while it shows no decoding too. A tab's module calls `askAgain` when its own controls change. */
export function computesHere(tab, make, now = () => true, asked = () => null, alone = false) {
  makers.set(tab, {make, now, asked, alone});
  askAgain(tab);
}

/** The tab's controls changed: what it shows is made again (here, or by the server). */
export function askAgain(tab) {
  for (const fn of offered) fn(tab);
}

/** Call `fn(tab)` whenever a tab's module says how its message is made, or its controls change. */
export function onOffered(fn) {
  offered.add(fn);
}

/** How the page makes the tab's message now for `model` ({make, asked}), or undefined: the server makes it. */
export function makerOf(tab, model = null) {
  const maker = makers.get(tab);
  return maker && maker.now(model) ? maker : undefined;
}


/** The view of `tab` takes the messages the page makes for it with `take(message)`, the last one made first. */
export function onMadeHere(tab, take) {
  views.set(tab, take);
  if (latest.has(tab)) take(latest.get(tab));
}

/** Hand the message the page made to the tab's view (kept for a view not mounted yet: gradio mounts a tab's
 * components as it first opens). */
export function madeHere(tab, message) {
  latest.set(tab, message);
  views.get(tab)?.(message);
}

let copies = {has: () => false, load: async (name) => Promise.reject(new Error(`no page copy of ${name} here`))};

/** The page copies the page can load besides the one it decodes with (side B of Two models): `found.has(name)`,
 * whether model `name`'s can load here; `found.load(name)`, a promise of it (a LiveModel). The road offers the
 * app's (decoding/in_page.mjs), a live page those it carries. */
export function offerCopies(found) {
  copies = found;
}

/** What offerCopies offered: {has(name), load(name)}. */
export function otherCopies() {
  return copies;
}

/** The texts (the server's own: notes, titles...) that the messages of `tab` carry. */
export function textsOf(tab) {
  return texts[tab] || {};
}

/** What the app says of the tabs the page computes (attention_lab/page/frame.py in_page): {tabs, drawn, texts}. */
export function declare(value) {
  declared = new Set(value?.tabs || []);
  drawn = new Set(value?.drawn || ["attention"]);
  texts = value?.texts || {};
}

/** The app's declaration, drawn nowhere. */
export function mount({props}) {
  declare(props.value);
}
