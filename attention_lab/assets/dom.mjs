// Small builders for the page's own elements. Text always goes in with textContent: token text is never markup.

/** An element of `tag` with `className` and, if given, `text` as its text. */
export function el(tag, className = "", text = null) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== null && text !== undefined) node.textContent = String(text);
  return node;
}

/** The element a module draws into: the component's .lab-drawn child (gradio keeps it, the template never changes). */
export function root(element) {
  return element.querySelector(".lab-drawn") || element;
}

const TAB = "#lab-tabs button[role=tab]";

/** Open the tab of the feature `id` (its Feature.id in attention_lab/tabs.py, which gradio gives the tab's button as
 * data-tab-id), wherever the table puts it. */
export function openTab(id) {
  document.querySelector(`${TAB}[data-tab-id="${id}"]`)?.click();
}

/** The feature id of the open tab (null before gradio has drawn the tabs). */
export function openTabId() {
  return document.querySelector(`${TAB}[aria-selected=true]`)?.dataset.tabId ?? null;
}

/** The Source box's text (the app's gradio Textbox and the live page's own field are both #lab-source); null where
 * there is none (Node). */
export function sourceText() {
  const box = globalThis.document?.getElementById("lab-source");
  return (box?.tagName === "TEXTAREA" ? box : box?.querySelector("textarea"))?.value ?? null;
}

/** Open the Attention tab, where a focused head or a kind chosen elsewhere is seen. */
export function openAttentionTab() {
  openTab("attention");
}

/** Whether `node` is on screen (its tab open): a hidden figure has no width to draw at. */
export function shown(node) {
  return !!node && node.offsetParent !== null;
}

/** Call `fn` when `node` comes into view again (a tab opened) or changes width. */
export function onVisible(node, fn) {
  placeOf(node, fn);
}

/** Where `node` is, kept as layout leaves it: {visible, width, top} (its tab open, its width, its top in the
 * document), read when the browser has laid the page out anyway (a ResizeObserver), so that reading it forces no
 * layout; `fn` is called when it comes into view again or changes width. */
export function placeOf(node, fn) {
  const place = {visible: false, width: 0, top: 0};
  new ResizeObserver(() => {
    const width = node.clientWidth, again = width !== place.width && width > 0;
    Object.assign(place, {visible: width > 0 && node.offsetParent !== null, width,
      top: width > 0 ? node.getBoundingClientRect().top + globalThis.scrollY : 0});
    if (again) fn();
  }).observe(node);
  return place;
}

/** A labelled control: <label>text <control></label>, so a reader (and a test) finds it by its label. */
export function labelled(text, control, className = "") {
  const label = el("label", className);
  label.append(el("span", "lab-control-name", text), control);
  return label;
}

/** A <select> of [value, text] options. */
export function select(options, value) {
  const s = el("select");
  for (const [key, text] of options) {
    const o = el("option", "", text);
    o.value = key;
    s.appendChild(o);
  }
  s.value = value;
  return s;
}
