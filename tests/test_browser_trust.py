"""In Chromium: the Trust tab draws a bar per token of the output, a pasted translation is scored in its place (its
unread words marked in the source and flagged), and a click on a flag points at its word; it fits 1440, 1280 and
390 px."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.browser import WAIT_MS, fresh, open_tab, run

pytestmark = pytest.mark.slow

SOURCE = "abcdef"
SHOTS = Path("/tmp/shots-trust")  # for a person to look at
VIEWPORTS = [{"width": 1440, "height": 900}, {"width": 1280, "height": 720}, {"width": 390, "height": 844}]


@pytest.mark.parametrize("viewport", VIEWPORTS, ids=["1440px", "1280px", "390px"])
def test_the_output_and_a_pasted_translation_are_scored(app_page, viewport):
    from playwright.sync_api import expect

    page = app_page
    fresh(page, viewport, "reverse")  # waits for the model's own example to be decoded, before the Run of SOURCE
    run(page, SOURCE)
    open_tab(page, "Trust")
    for label in ("Source", "Output"):  # the step loop's boxes, as scripts find them, with the tab's controls drawn
        assert page.get_by_label(label).count() == 1, label
    bars = page.locator("#trust-view .trust-bar")
    expect(bars).to_have_count(7, timeout=WAIT_MS)  # f e d c b a and the end token
    expect(page.locator("#trust-view .trust-what")).to_contain_text("The model's translation, scored by ALTI+")
    expect(page.locator("#trust-view .trust-flags")).to_contain_text("No flags")
    # each bar's share from the source (a custom property), drawn by trust.css as that part of the bar's width
    shares = page.evaluate(
        "() => [...document.querySelectorAll('#trust-view .trust-bar')].map((b) => [b.style.getPropertyValue('--share'),"
        " b.firstChild.getBoundingClientRect().width / b.getBoundingClientRect().width])"
    )
    assert all(0 < float(share) <= 1 and abs(drawn - float(share)) < 0.01 for share, drawn in shares), shares
    shot(page, f"own-{viewport['width']}")
    page.get_by_label("Translation to score").fill("fed")
    page.get_by_label("Translation to score").press("Enter")
    expect(bars).to_have_count(4, timeout=WAIT_MS)
    expect(page.locator("#trust-view .trust-words .word.uncovered")).to_have_text(["a", "b"], timeout=WAIT_MS)
    flags = page.locator("#trust-view .trust-flag")
    expect(flags).to_have_count(2)
    expect(flags.first).to_contain_text("Barely read (word 1)")
    expect(page.locator("#trust-view .trust-scores")).to_contain_text("67% (barely read: “a”, “b”)")
    flags.first.click()
    page.locator("#trust-view .trust-bar").nth(1).click()  # a pasted translation's step, shown within the tab
    outline = "(i) => { const s = getComputedStyle(document.querySelectorAll('#trust-view .trust-bar')[i]); "
    outline += "return `${s.outlineStyle} ${s.outlineWidth}`; }"
    page.wait_for_function(f"() => ({outline})(1) === 'solid 2px'", timeout=WAIT_MS)
    assert page.evaluate(f"() => ({outline})(0)").startswith("none")
    expect(page.locator("#trust-view .trust-words .word").first).to_have_attribute("title", re.compile("at step 2: "))
    shot(page, f"pasted-{viewport['width']}")
    assert page.evaluate("() => document.documentElement.scrollWidth") <= viewport["width"]


def shot(page, name: str) -> None:
    SHOTS.mkdir(exist_ok=True)
    page.locator("#trust-view").scroll_into_view_if_needed()
    page.screenshot(path=str(SHOTS / f"{name}.png"))
