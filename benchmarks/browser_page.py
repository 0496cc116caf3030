"""The browser benchmark's hands and eyes on a page (benchmarks/browser_speed.py): a MutationObserver that times a
click to the page's last DOM change, and the scripts that click, move, press and choose as a person would."""

from __future__ import annotations

QUIET_MS = 1000  # no DOM change for this long after the last one: the page has settled

WATCH = """() => {
  window.__lab = {t0: 0, last: 0, answered: 0, drawn: 0, armed: false};
  const seen = m => {
    const el = m.target.nodeType === 1 ? m.target : m.target.parentElement;
    return !(el && el.closest('.sr-only'));
  };
  // Outside the regions filled after the click (and not in a node already taken out of the page, such as a
  // figure gradio replaced, nor in plotly's hidden text-measuring element, which any figure's drawing uses).
  // Nor gradio's status tracker of an output while it is invisible (an event's streamed answer ending flips it).
  const answer = m => {
    const el = m.target.nodeType === 1 ? m.target : m.target.parentElement;
    if (!el || !el.isConnected || el.closest('.lab-slow, #js-plotly-tester')) return false;
    return !(m.type === 'attributes' && el.matches('.wrap') && getComputedStyle(el).opacity === '0');
  };
  // A dropdown's own menu: its options, the combobox's state, and the menu leaving when it closes.
  const menu = m => {
    const el = m.target.nodeType === 1 ? m.target : m.target.parentElement;
    if (!el) return false;
    if (el.closest('[role=listbox], .options') || el.matches('input[role=combobox]')) return true;
    const nodes = [...m.addedNodes, ...m.removedNodes];
    return nodes.length > 0 && nodes.every(n => n.nodeType !== 1 || n.matches('.options, .reference'));
  };
  new MutationObserver(ms => {
    const now = performance.now();
    if (ms.some(seen)) window.__lab.last = now;
    if (ms.some(m => seen(m) && answer(m))) window.__lab.answered = now;
    if (ms.some(m => seen(m) && !menu(m))) window.__lab.drawn = now;
  }).observe(document.body, {subtree: true, childList: true, attributes: true, characterData: true});
  // A click on a dropdown's option: the time starts at the press itself.
  document.addEventListener('mousedown', () => {
    if (window.__lab.armed) { window.__lab.armed = false; window.__lab.t0 = performance.now(); window.__lab.last = 0; }
  }, true);
}"""
CLICK = """name => {
  // not gradio's copies of the tab buttons (for its overflow menu), which are out of the tab order
  const button = [...document.querySelectorAll('button')].find(b => b.tabIndex !== -1 && b.innerText.trim() === name);
  window.__lab.last = 0;
  window.__lab.t0 = performance.now();
  button.click();
}"""
CLICK_NTH = """([selector, n]) => {
  const element = document.querySelectorAll(selector)[n];
  window.__lab.last = 0;
  window.__lab.t0 = performance.now();
  element.click();
}"""
WORDS = ".now-view .word"  # the source words of "What the model looked at" (a click edits at the shown step)
MOVE_SLIDER = """([label, n]) => {
  // the slider labelled `label` (Show step, Snapshot): the page's own, or an earlier page's gradio slider
  const own = [...document.querySelectorAll('label')].find(l => l.textContent.trim() === label && l.htmlFor);
  const range = (own && document.getElementById(own.htmlFor))
    || [...document.querySelectorAll('label')].find(l => l.textContent.startsWith(label) && l.querySelector('input[type=range]'))?.querySelector('input[type=range]')
    || document.querySelector(`input[type=range][aria-label^="range slider for ${label}"]`);
  window.__lab.last = 0;
  window.__lab.t0 = performance.now();
  range.value = n;
  range.dispatchEvent(new Event('input', {bubbles: true}));
}"""
PRESS = """key => {
  window.__lab.last = 0;
  window.__lab.t0 = performance.now();
  document.body.dispatchEvent(new KeyboardEvent('keydown', {key, bubbles: true}));
}"""
SETTLED = "q => window.__lab.last > window.__lab.t0 && performance.now() - window.__lab.last > q"


def settle(page) -> None:
    """Wait until the page has not changed for QUIET_MS (after loading, or after a click)."""
    page.evaluate("() => { window.__lab.last = performance.now(); window.__lab.t0 = window.__lab.last - 1; }")
    page.wait_for_function(SETTLED, arg=QUIET_MS, polling=50, timeout=120_000)


def click_ms(page, name, script: str = CLICK, answered: list[float] | None = None) -> float:
    """Milliseconds from clicking the button labelled `name` (or what `script` does with `name`) to the page's last
    DOM change; when `answered` is given, the time to the last change outside the slow regions is added to it."""
    page.evaluate(script, name)
    page.wait_for_function(SETTLED, arg=QUIET_MS, polling=50, timeout=120_000)
    last, first = page.evaluate("() => [window.__lab.last - window.__lab.t0, window.__lab.answered - window.__lab.t0]")
    if answered is not None:
        answered.append(max(0.0, min(first, last)))
    return last


CHOOSE = """([label, value]) => {
  // the page's own menu labelled `label` (Focus head, Reading...): a native select
  const select = [...document.querySelectorAll('label')].find(l => l.textContent.startsWith(label) && l.querySelector('select')).querySelector('select');
  window.__lab.last = 0;
  window.__lab.t0 = performance.now();
  select.value = value;
  select.dispatchEvent(new Event('change', {bubbles: true}));
}"""


TILE_CENTRE = """([layer, head]) => {
  const canvas = document.querySelector('#views .views-grid canvas.tiles');
  const g = canvas.geometry, t = g.tiles, box = canvas.getBoundingClientRect();
  return [box.left + g.l + (head * (t.K + t.gapK) + t.K / 2) * g.cellW,
          box.top + g.t + (layer * (t.Q + t.gapQ) + t.Q / 2) * g.cellH];
}"""


def tile_ms(page, layer: int, head: int) -> float:
    """Milliseconds from pressing a head's tile in the open view's overview (0-based) to the last DOM change."""
    return press_ms(page, page.evaluate(TILE_CENTRE, [layer, head]))


def press_ms(page, at: list[float], answered: list[float] | None = None) -> float:
    """Milliseconds from a mouse press at `at` (x, y on the screen: a point of a figure) to the last DOM change;
    when `answered` is given, the time to the last change outside the slow regions is added to it."""
    page.mouse.move(*at)  # a person points at it first
    settle(page)
    page.evaluate("() => { window.__lab.armed = true; }")
    page.mouse.down()
    page.mouse.up()
    page.wait_for_function(SETTLED, arg=QUIET_MS, polling=50, timeout=120_000)
    last, first = page.evaluate("() => [window.__lab.last - window.__lab.t0, window.__lab.answered - window.__lab.t0]")
    if answered is not None:
        answered.append(max(0.0, min(first, last)))
    return last


def open_page(browser, url: str, width: int = 1400, height: int = 1000):
    page = browser.new_context(viewport={"width": width, "height": height}).new_page()
    page.goto(url)
    page.wait_for_selector("button", timeout=60_000)
    page.evaluate(WATCH)
    settle(page)
    sent: list[str] = []
    page.on("request", lambda request: sent.append(request.url))
    page.requests = sent
    return page


def set_source(page, text: str) -> None:
    page.get_by_label("Source").fill(text)
    settle(page)


def pick_model(page, name: str) -> None:
    page.get_by_label("Model").click()
    page.get_by_role("option", name=name, exact=True).click()
    settle(page)
