"""In Chromium: the Flow tab draws the shown step's graph; the threshold redraws it in the page, with no request;
Show step's keys move it; a click on a head's edge focuses that head in the Attention tab; the tab fits 1440, 1280
and 390 px with no sideways scroll."""

from __future__ import annotations

import pytest

from tests.browser import LAPTOP, NARROW, PROJECTOR, WAIT_MS, fresh, open_tab, run, shot, watch_requests

pytestmark = pytest.mark.slow

SUMMARY = "() => document.querySelector('#flow-view .flow-summary')?.textContent || ''"
FIGURE = "#flow-view .flow-figure"
# The middles of the drawn edges: how many, and where the first head edge's is, with what the pointer over it shows
MIDDLES = """() => {
  const middles = [...document.querySelectorAll('#flow-view .flow-figure svg .flow-middle')];
  for (const middle of middles) {
    middle.dispatchEvent(new MouseEvent('mouseover', {bubbles: true}));
    const text = document.querySelector('#flow-view .flow-tip')?.textContent || '';
    if (text.includes(' head L')) {
      const box = middle.getBoundingClientRect();
      return {count: middles.length, head: {x: box.left + box.width / 2, y: box.top + box.height / 2, text}};
    }
  }
  return {count: middles.length, head: null};
}"""
SENTENCE = "Bitte schließen Sie das Fenster, wenn es draußen regnet."


def flow_opened(page, viewport: dict):
    """The module's shared page (conftest.py: app_page) at this screen size, on the Flow tab after a Run."""
    fresh(page, viewport, "de-en")
    run(page, SENTENCE)
    open_tab(page, "Flow")
    page.wait_for_function(f"() => ({SUMMARY})().startsWith('Step ')", timeout=WAIT_MS)
    page.settle()
    return page


def test_the_threshold_and_the_step_redraw_in_the_page_and_a_head_edge_focuses_its_head(app_page):
    page = flow_opened(app_page, LAPTOP)
    last = page.evaluate("() => window.attentionLab.shown")
    assert page.evaluate(SUMMARY).startswith(f"Step {last} wrote")
    before = page.evaluate(MIDDLES)["count"]
    sent = watch_requests(page)
    slider = page.locator("#flow-view .flow-controls input[type=range]")
    slider.fill("0.2")  # an input event, as a drag sends
    page.wait_for_function(f"() => ({SUMMARY})().includes('at or above 0.20')", timeout=WAIT_MS)
    fewer = page.evaluate(MIDDLES)["count"]
    assert 0 < fewer < before
    slider.fill("0.04")
    page.wait_for_function(f"() => ({SUMMARY})().includes('at or above 0.04')", timeout=WAIT_MS)
    assert page.evaluate(MIDDLES)["count"] == before
    page.locator("body").click(position={"x": 5, "y": 5})  # no text box focused: the keys move the shown step
    page.keyboard.press("ArrowLeft")
    page.wait_for_function(f"() => ({SUMMARY})().startsWith('Step {last - 1} wrote')", timeout=WAIT_MS)
    assert not [u for u in sent if "/queue/" in u or "/gradio_api/" in u], sent  # all of it drawn in the page

    head = page.evaluate(MIDDLES)["head"]
    assert head is not None
    page.mouse.move(head["x"], head["y"])
    assert page.locator("#flow-view .flow-tip").text_content() == head["text"]  # the pointer itself shows it
    page.mouse.click(head["x"], head["y"])
    kinds = {"encoder self": "encoder", "decoder self": "decoder_self", "cross": "cross"}
    named = next(k for k in kinds if head["text"].startswith(k))
    layer, number = head["text"].split(" head L")[1].split(":")[0].split(" H")
    page.wait_for_function(
        f"() => window.attentionLab.kind === {kinds[named]!r} && JSON.stringify(window.attentionLab.look.focus) === "
        f"'[{int(layer) - 1},{int(number) - 1}]'",
        timeout=WAIT_MS,
    )
    assert page.get_by_role("tab", name="Attention", exact=True).get_attribute("aria-selected") == "true"


@pytest.mark.parametrize(("size", "viewport"), [("1440", LAPTOP), ("1280", PROJECTOR), ("390", NARROW)])
def test_the_flow_tab_fits_the_screen(app_page, size, viewport):
    page = flow_opened(app_page, viewport)
    assert page.evaluate("() => document.documentElement.scrollWidth <= window.innerWidth")
    figure = page.locator(FIGURE)
    # drawn at its size: the summary can be written a frame before the figure is laid out (115 px high then, once)
    page.wait_for_function(
        f"() => document.querySelector({FIGURE!r}).getBoundingClientRect().height > 300", timeout=WAIT_MS
    )
    box = figure.bounding_box()
    assert box["width"] <= viewport["width"] and box["height"] > 300
    figure.scroll_into_view_if_needed()
    shot(page, f"flow-{size}", full_page=False)
