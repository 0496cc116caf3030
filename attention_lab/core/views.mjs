// The Attention tab: the kind of attention (cross, encoder self, decoder self), the Focus head and the look of the
// weights (words or pieces, special tokens, colour scale, reading), then the focused head large and every head
// beside it or under it. All of it is drawn here from the decoding the page holds: no request to the server.

import {el, labelled, placeOf, root, select} from "../assets/dom.mjs";
import {focusChoices, focusLabel, focusOf} from "../assets/style.mjs";
import {draw, emptyFigure, legend, withColourBar} from "../assets/plot.mjs";
import {page, setKind, setLook, watch} from "../assets/store.mjs";
import {kindFigures} from "./figures.mjs";
import {paint, tileAt} from "./tiles.mjs";

const BESIDE_PX = 700; // wider than this, the grid goes beside the focused head
const HINTS = {cross: "key 1", encoder: "key 2", decoder_self: "key 3"};

/** Whether the page is in presenter mode (large type, for a projector). */
const presenterMode = () => Boolean(globalThis.document?.body.classList.contains("lab-presenter"));

/** A figure in presenter mode's large type; as it is otherwise. */
export function large(fig, presenting = presenterMode()) {
  if (!presenting) return fig;
  const bigger = (axis) => (axis ? {...axis, tickfont: {...(axis.tickfont || {}), size: 16}} : axis);
  const layout = {...fig.layout, font: {size: 16}, xaxis: bigger(fig.layout.xaxis), yaxis: bigger(fig.layout.yaxis)};
  if (layout.title) {
    layout.title = {...layout.title, font: {size: 17}};
    if (layout.margin) layout.margin = {...layout.margin, t: layout.margin.t + 10}; // room for the larger title
  }
  return {...fig, layout};
}

/** The sizes the figures get in a container at `place` (placeOf): the focused head fills the screen's height below
 * it. */
export function sizes({width, top}) {
  const beside = width >= BESIDE_PX;
  const focusHeight = Math.max(240, Math.min(900, globalThis.innerHeight - top - 16));
  const gridWidth = beside ? Math.min(Math.round(0.42 * width), 420) : width;
  return {beside, focusHeight, gridWidth, gridHeight: beside ? focusHeight : Math.min(360, Math.round(0.6 * width))};
}

/** A button per kind of attention (`names`: the server's), each of class `className`, that makes it the page's kind. */
function kindButtons(className, names) {
  const kinds = el("div", "views-kinds");
  kinds.setAttribute("role", "group");
  kinds.setAttribute("aria-label", "Kind of attention");
  for (const kind of names.order) {
    const title = names.kinds[kind].title;
    const button = el("button", className, title);
    Object.assign(button, {type: "button", title: `${title} (${HINTS[kind]})`});
    button.dataset.kind = kind;
    button.addEventListener("click", () => setKind(kind));
    kinds.appendChild(button);
  }
  return kinds;
}

function controls(names) {
  const kinds = kindButtons("views-kind", names);
  const focus = select([[names.focus_mean, names.focus_mean]], names.focus_mean);
  focus.title = "↑ ↓ change the focused head (with no text box focused); or click a head in the grid";
  focus.addEventListener("change", () => setLook({focus: focusOf(focus.value)}));
  const words = Object.assign(el("input"), {type: "checkbox", checked: true});
  words.addEventListener("change", () => setLook({words: words.checked}));
  const specials = Object.assign(el("input"), {type: "checkbox", checked: false});
  specials.addEventListener("change", () => setLook({hideSpecials: specials.checked}));
  const scale = select(Object.entries(names.scales), "linear");
  scale.addEventListener("change", () => setLook({scale: scale.value}));
  const reading = select(Object.entries(names.readings), "weights");
  reading.addEventListener("change", () => setLook({reading: reading.value}));
  const png = Object.assign(el("button", "views-download", "PNG"), {type: "button", title: "The focused head as PNG"});
  const svg = Object.assign(el("button", "views-download", "SVG"), {type: "button", title: "The focused head as SVG"});
  const bar = el("div", "views-bar");
  bar.append(kinds, labelled("Focus head", focus, "views-focus-choice"), png, svg);
  const look = el("div", "views-look");
  look.append(labelled("Merge pieces into words", words, "check"), labelled("Hide special tokens", specials, "check"),
    labelled("Colour scale", scale), labelled("Reading", reading));
  return {parts: [bar, look], kinds, focus, words, specials, scale, reading, png, svg};
}

/** The page's own decoding at the step it shows: what the Attention tab draws. */
const PAGE_SOURCE = {decoding: () => page.decoding, shown: () => page.shown, empty: "Run or Step to decode."};

/** The views drawn into `box` from `source`: {decoding(), shown(), empty (what to say with no decoding), compact},
 * redrawn as the page's kind and look change; returns how to redraw them when the source changes. A compact one has
 * only its kind buttons (class "views-kind-compact"): its focused head and look are the Attention tab's. Its
 * controls are laid out once the page has the server's names. */
export function attentionViews(box, source = PAGE_SOURCE) {
  const figures = el("div", "views-figures");
  const focusBox = el("div", "views-focus"), gridBox = el("div", "views-grid");
  figures.append(focusBox, gridBox);
  box.replaceChildren(figures);
  let shape = "", c = null, drawn = null, focused = null; // drawn: what the figures show now (see `redraw`)
  const download = (format) => {
    if (focused && focused.data.length && globalThis.Plotly) {
      globalThis.Plotly.downloadImage(withColourBar(focused, page.look), {format, filename: "attention-head", width: 900});
    }
  };
  const laidOut = () => {
    if (c || !page.names) return c;
    c = source.compact ? {kinds: kindButtons("views-kind-compact", page.names), parts: []} : controls(page.names);
    box.prepend(...(source.compact ? [c.kinds] : c.parts));
    c.png?.addEventListener("click", () => download("png"));
    c.svg?.addEventListener("click", () => download("svg"));
    return c;
  };

  const sync = () => {
    if (!laidOut()) return;
    for (const button of c.kinds.children) button.setAttribute("aria-pressed", String(button.dataset.kind === page.kind));
    if (source.compact) return;
    const d = source.decoding();
    const now = d ? `${Math.max(d.Le, d.Ld)}x${d.H}` : "";
    if (now !== shape && d) {
      shape = now;
      c.focus.replaceChildren(...focusChoices(Math.max(d.Le, d.Ld), d.H, page.names.focus_mean).map((label) => {
        const option = el("option", "", label);
        option.value = label;
        return option;
      }));
    }
    const f = page.look.focus;
    c.focus.value = f ? focusLabel(...f) : page.names.focus_mean;
    if (c.focus.value === "") c.focus.value = page.names.focus_mean; // a head this model does not have
    Object.assign(c.words, {checked: page.look.words});
    Object.assign(c.specials, {checked: page.look.hideSpecials});
    c.scale.value = page.look.scale;
    c.reading.value = page.look.reading;
  };
  // What the figures are drawn from: the same, and nothing is drawn again (a Step leaves the source's attention as
  // it is; the decoding's revision changes with every step more or fewer).
  const drawing = (d, size) => [d, d && page.kind !== "encoder" ? `${d.revision}|${source.shown()}` : "", page.kind,
    JSON.stringify(page.look), JSON.stringify(size), presenterMode(), source.empty];
  const redraw = () => {
    sync();
    if (!place.visible || !page.names) return;
    const size = sizes(place);
    figures.classList.toggle("beside", size.beside);
    const d = source.decoding(), now = drawing(d, size);
    if (drawn && now.every((part, i) => part === drawn[i])) return;
    drawn = now;
    const made = d ? kindFigures(d, page.kind, source.shown(), page.look, size) : {focus: emptyFigure(source.empty, 200)};
    // the canvas first: its type is set while the page's style is still as laid out (after plotly's drawing, setting
    // it would work the style out again)
    if (made.grid) paint(gridBox, made.grid, size.gridWidth, size.gridHeight, presenterMode() ? 16 : 12);
    else gridBox.replaceChildren();
    focused = large(made.focus);
    draw(focusBox, focused);
    legend(focusBox, focused, page.look);
  };
  gridBox.addEventListener("click", (event) => {
    const canvas = gridBox.querySelector("canvas.tiles");
    if (!canvas) return;
    const rect = canvas.getBoundingClientRect();
    const tile = tileAt(canvas, event.clientX - rect.left, event.clientY - rect.top);
    if (tile) setLook({focus: tile});
  });
  const place = placeOf(figures, redraw);
  watch(redraw, true);
  globalThis.addEventListener("resize", redraw);
  redraw();
  return redraw;
}

export function mount({element}) {
  attentionViews(root(element));
}
