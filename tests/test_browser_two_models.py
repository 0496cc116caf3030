"""In Chromium: the Two models tab draws the page's decoding beside a training snapshot's; Show step's keys move both
sides with no request, the second side following by the shared word; a click on a word of model B shows it; the
focused head of each side changes its bars; hovering a source word's row marks it in both; model B made to write
model A's words shares every word; the tab fits 1440, 1280 and 390 px with no sideways scroll."""

from __future__ import annotations

import json

import pytest

from tests.browser import LAPTOP, NARROW, PROJECTOR, WAIT_MS, fresh, open_tab, run, shared, shot, watch_requests
from tests.test_two_models import compare

pytestmark = pytest.mark.slow

FIGURE = "() => document.querySelector('#two-models-view .two-models-figure .js-plotly-plot')"
SUMMARY = "() => document.querySelector('#two-models-view .two-models-summary')?.textContent || ''"
# The shown word of each side, and the bars each side draws
SHOWN_WORDS = """() => [...document.querySelectorAll('#two-models-view .two-models-side')].map(
  (side) => side.querySelector('.two-models-word.is-shown')?.textContent ?? null)"""
BARS = f"() => ({FIGURE})().data.map((trace) => Array.from(trace.x))"
SOURCE = "abcdef12"
SECOND = "reverse@step 583"  # half-trained: it writes some of the reversal, in another order


def pick_second(page, name: str) -> None:
    page.get_by_label("Side B", exact=True).click()
    page.get_by_role("option", name=name, exact=True).click()
    page.wait_for_function(f"() => ({SUMMARY})().includes('word')", timeout=WAIT_MS)
    page.settle()


def two_models_opened(page, viewport: dict):
    """A page (newly opened, or the module's shared one: conftest.py's app_page) at this screen size, on the Two models
    tab after a Run, with SECOND as side B."""
    fresh(page, viewport, "reverse")
    run(page, SOURCE)
    open_tab(page, "Two models")
    pick_second(page, SECOND)
    return page


def followed(answer: dict, a: int) -> str | None:
    """The word model B shows while model A shows its word `a`, by the tab's rule, from /compare_models's answer:
    the same word where the two share it; else B's word as many words after the last shared one, if it comes before
    the next."""
    before, after = (-1, -1), None
    for pair in answer["shared"]:
        if pair["a"] == a:
            return answer["models"][1]["output_words"][pair["b"]]
        if pair["a"] < a:
            before = (pair["a"], pair["b"])
        elif after is None:
            after = pair["b"]
    b = before[1] + a - before[0]
    words = answer["models"][1]["output_words"]
    return words[b] if b < (len(words) if after is None else after) else None


def test_show_step_moves_both_sides_in_the_page_by_the_rule_and_a_click_shows_a_word_of_b(served_app, browser):
    url, registry, _ = served_app
    answer = compare(registry, "reverse", SECOND, SOURCE)
    words_a = answer["models"][0]["output_words"]
    assert 0 < len(answer["shared"]) < len(words_a)  # a case with shared words and words not shared
    page = two_models_opened(shared(browser, url), LAPTOP)
    assert "Jensen–Shannon distance" in page.evaluate(SUMMARY)
    for label in ("Model", "Source", "Output", "Side B"):  # each found by its label alone
        assert page.get_by_label(label).count() == 1, label
    sent = watch_requests(page)
    page.locator("body").click(position={"x": 5, "y": 5})  # no text box focused: the keys move the shown step
    page.keyboard.press("Home")
    page.wait_for_function(f"() => JSON.stringify(({SHOWN_WORDS})()) === '[null,null]'", timeout=WAIT_MS)
    for a, word in enumerate(words_a):  # a character model: step a + 1 writes word a
        page.keyboard.press("ArrowRight")
        page.wait_for_function(f"() => ({SHOWN_WORDS})()[0] === {word!r}", timeout=WAIT_MS)
        assert page.evaluate(SHOWN_WORDS) == [word, followed(answer, a)], a
        bars = page.evaluate(BARS)
        assert sum(bars[0]) == pytest.approx(1, abs=1e-3)  # A's word row over the source's words

    own = page.locator("#two-models-view .two-models-side-b .two-models-word.is-own").first  # not in A's output
    own.click()
    page.wait_for_function(f"() => ({SHOWN_WORDS})()[1] === {own.text_content()!r}", timeout=WAIT_MS)

    # The head chosen for B changes B's bars, not A's
    before = page.evaluate(BARS)
    page.locator("#two-models-view .two-models-side-b select").select_option(label="Layer 1 · Head 1")
    page.wait_for_function(f"() => JSON.stringify(({BARS})()[1]) !== {json.dumps(before[1])!r}", timeout=WAIT_MS)
    after = page.evaluate(BARS)
    assert after[0] == before[0] and after[1] != before[1]
    assert not [u for u in sent if "/queue/" in u or "/gradio_api/" in u], sent  # all of it drawn in the page

    # Hovering a source word's row marks it in both panels: one band across the figure, at that row
    at = page.evaluate(
        f"""() => {{ const gd = ({FIGURE})(), box = gd.getBoundingClientRect(), xa = gd._fullLayout.xaxis2,
        ya = gd._fullLayout.yaxis2; return {{x: box.left + xa._offset + xa._length * 0.1,
        y: box.top + ya._offset + ya.l2p(2)}}; }}"""
    )
    page.mouse.move(at["x"], at["y"])
    page.wait_for_function(f"() => (({FIGURE})().layout.shapes || []).length === 1", timeout=WAIT_MS)
    shape = page.evaluate(f"() => ({FIGURE})().layout.shapes[0]")
    assert (shape["xref"], shape["x0"], shape["x1"], shape["y0"], shape["y1"]) == ("paper", 0, 1, 1.5, 2.5)

    # Model B made to write model A's words: the two outputs are then the same, word for word
    page.get_by_label("A's words (forced on it)").check()
    page.wait_for_function(f"() => ({SUMMARY})().startsWith('The two outputs are the same, word for word')", timeout=WAIT_MS)  # fmt: skip
    assert (
        page.locator("#two-models-view .two-models-side-b .two-models-name")
        .text_content()
        .endswith("writing A's words")
    )
    page.close()


@pytest.mark.parametrize("viewport, name", [(LAPTOP, "1440"), (PROJECTOR, "1280"), (NARROW, "390")])
def test_the_tab_fits_each_screen(app_page, viewport, name):
    page = two_models_opened(app_page, viewport)
    page.locator("#two-models-view .two-models-side-a .two-models-word").nth(2).click()
    page.wait_for_function(f"() => ({SHOWN_WORDS})()[0] !== null", timeout=WAIT_MS)
    page.settle()
    assert page.evaluate("() => document.documentElement.scrollWidth") <= viewport["width"] + 1
    box = page.locator("#two-models-view .two-models-figure").bounding_box()
    assert box is not None and box["width"] <= viewport["width"]
    shot(page, f"two-models-{name}")
