// The page's header: its name, a hint that keys exist (? lists them), the link of what the page shows (copied, from
// assets/address.mjs), and presenter mode, which shows only the step loop and the views in large type
// for a projector. ?presenter in the address starts in it.

import {el, openAttentionTab, root} from "../assets/dom.mjs";
import {BUTTON_HINTS, KEYS, install} from "../assets/keys.mjs";
import {setNames} from "../assets/store.mjs";

const PRESENTING = "lab-presenter";

function keysList() {
  const list = el("dl", "keys-list");
  for (const [keys, what] of KEYS) list.append(el("dt", "", keys), el("dd", "", what));
  const dialog = el("div", "keys-help");
  dialog.setAttribute("role", "dialog");
  dialog.setAttribute("aria-label", "Keys");
  dialog.hidden = true;
  dialog.append(el("b", "", "Keys (with no text box focused; inside a Space, click the app first)"), list);
  return dialog;
}

/** Copy the link of what the page shows, and say so on the button for a moment (where the browser lets the page
 * write to the clipboard; else the address bar holds the same link). */
async function copyLink(button) {
  const address = globalThis.attentionLabAddress;
  const link = address ? address.link() : globalThis.location.href;
  let said = "Link in the address bar";
  try {
    await globalThis.navigator.clipboard.writeText(link);
    said = "Link copied";
  } catch {
    globalThis.history.replaceState(null, "", link); // no clipboard here (not https or localhost): the address has it
  }
  button.textContent = said;
  setTimeout(() => (button.textContent = "Link"), 2000);
}

/** Presenter mode on or off: the class on the page, the toggle, and the address (so that a link keeps it). */
export function present(on, toggle) {
  document.body.classList.toggle(PRESENTING, on);
  toggle.setAttribute("aria-pressed", String(on));
  const address = new URL(globalThis.location.href);
  if (on) address.searchParams.set("presenter", "1");
  else address.searchParams.delete("presenter");
  globalThis.history.replaceState(null, "", address);
  if (on) openAttentionTab();
  globalThis.dispatchEvent(new Event("resize")); // the figures take the room they now have
}

export function mount({element, props}) {
  setNames(props.value); // the server's names of the kinds and the looks, sent once as the page opens
  const box = root(element);
  const hint = Object.assign(el("button", "keys-hint", "Keys: ← → step · ↑ ↓ head · 1 2 3 kind · ? all"), {type: "button"});
  const toggle = Object.assign(el("button", "presenter-toggle", "Presenter mode"), {type: "button"});
  toggle.title = "Large type, only the step loop and the views (or add ?presenter to the address)";
  const link = Object.assign(el("button", "lab-link", "Link"), {type: "button"});
  link.title = "Copy the link of this page: the tab, the model and the source (?tab=…&model=…&source=…)";
  link.addEventListener("click", () => copyLink(link));
  const dialog = keysList();
  const title = el("div", "lab-title");
  title.append(el("span", "lab-name", "Attention Lab"), el("span", "lab-subtitle",
    "Step through an encoder–decoder Transformer's decoding and see where every head looks."));
  const tools = el("div", "lab-tools");
  tools.append(hint, link, toggle);
  box.replaceChildren(title, tools, dialog);
  const help = () => { dialog.hidden = !dialog.hidden; };
  hint.addEventListener("click", help);
  toggle.addEventListener("click", () => present(!document.body.classList.contains(PRESENTING), toggle));
  const step = () => {
    const button = document.querySelector("#lab-step");
    if (button && !button.disabled) button.click();
  };
  install(document, {step, help});
  for (const [id, hint] of Object.entries(BUTTON_HINTS)) {
    const button = document.getElementById(id);
    if (button) button.title = hint;
  }
  document.addEventListener("keydown", (event) => { if (event.key === "Escape") dialog.hidden = true; });
  const asked = new URLSearchParams(globalThis.location.search).get("presenter");
  if (asked !== null && asked !== "0") present(true, toggle);
}
