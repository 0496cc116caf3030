"""In Chromium: the Why tab draws the shown step's attribution beside its attention, each head's agreement and the
decoder's lens; Show step redraws it with no request, a click on a head focuses it, another method is attributed
after the click, and the deletion test fills in on request; it fits 390 px."""

from __future__ import annotations

import pytest

from tests.browser import NARROW, WAIT_MS, button, open_tab, opened, run, watch_requests

pytestmark = pytest.mark.slow

SOURCE = "Bitte schließen Sie das Fenster."
HEADING = "() => document.querySelector('#why-view .why-heading')?.innerText || ''"
AGREEMENT = "() => document.querySelector('#why-view .why-cross .js-plotly-plot')"
LENS = "() => document.querySelector('#why-view .why-lens .js-plotly-plot')"


def shows(page, text: str) -> None:
    page.wait_for_function(f"() => ({HEADING})().includes({text!r})", timeout=WAIT_MS)


def test_the_why_tab_follows_the_shown_step_in_the_page_and_a_click_focuses_a_head(served_app, browser):
    from playwright.sync_api import expect

    url, registry, _ = served_app
    config = registry.entry("de-en").pipeline.model.config
    page = opened(browser, url)
    run(page, SOURCE)
    open_tab(page, "Why")
    page.wait_for_function(f"() => ({HEADING})().startsWith('Step ')", timeout=WAIT_MS)
    page.settle()
    assert page.evaluate(f"() => ({AGREEMENT})().data[0].z.length") == config.n_decoder_layers
    lens = page.evaluate(f"() => {{ const gd = ({LENS})(); return [gd.data[0].z.length, gd.data[0].x.length]; }}")
    n = page.evaluate("() => window.attentionLab.decoding.steps.length")
    assert lens == [config.n_decoder_layers, n]  # layers down, every step across
    sent = watch_requests(page)
    page.locator("#why-view .why-text").click()  # nothing focused that takes keys: the page's keys move the step
    page.keyboard.press("Home")
    page.keyboard.press("ArrowRight")
    shows(page, "Step 1 wrote")
    page.keyboard.press("ArrowRight")
    shows(page, "Step 2 wrote")
    words = page.locator("#why-view .why-row").first.locator(".word")
    assert words.count() >= 5 and "Fenster" in words.all_inner_texts()  # the source, merged into words
    assert sent == [], f"the Why tab asked the server: {sent}"
    page.locator("#why-view .why-cross").scroll_into_view_if_needed()
    box = page.evaluate(
        f"() => {{ const r = ({AGREEMENT})().querySelector('.nsewdrag').getBoundingClientRect(); "
        "return [r.x, r.y, r.width, r.height]; }"
    )
    heads = config.n_heads
    page.mouse.click(box[0] + box[2] * (heads - 0.5) / heads, box[1] + box[3] * 0.5 / config.n_decoder_layers)
    expect(page.get_by_label("Focus head")).to_have_value(f"Layer 1 · Head {heads}", timeout=WAIT_MS)
    page.close()


def test_another_method_and_the_deletion_test_fill_in_after_the_click(served_app, browser):
    from playwright.sync_api import expect

    page = opened(browser, served_app[0], NARROW)
    run(page, SOURCE)
    open_tab(page, "Why")
    page.wait_for_function(f"() => ({HEADING})().startsWith('Step ')", timeout=WAIT_MS)
    page.get_by_label("Integrated gradients").check()
    expect(page.locator("#why-view")).to_contain_text("Completeness", timeout=WAIT_MS)
    expect(page.locator("#why-view .why-note").first).to_contain_text("Integrated gradients")
    button(page, "Run the deletion test on this sentence").click()
    expect(page.locator("div.prose.why-deletion")).to_contain_text("random", timeout=WAIT_MS)
    expect(page.locator("div.prose.why-deletion")).to_contain_text("Occlusion")
    width = page.evaluate("() => document.documentElement.scrollWidth")
    assert width <= 390, f"the page is {width} px wide at 390 px"
    page.close()
