"""In Chromium: the Why tab draws the shown step's attribution beside its attention, each head's agreement and the
decoder's lens; Show step redraws it with no request, a click on a head focuses it, another method is attributed
after the click, and the deletion test fills in on request; it fits 390 px."""

from __future__ import annotations

import pytest

from tests.browser import NARROW, WAIT_MS, WIDE, button, fresh, open_tab, opened, run, watch_requests

pytestmark = pytest.mark.slow

SOURCE = "Bitte schließen Sie das Fenster."
HEADING = "() => document.querySelector('#why-view .why-heading')?.innerText || ''"
AGREEMENT = "#why-view .why-cross .why-grid"  # each head's agreement: a cell a head (why/agreement.mjs)
LENS = "() => document.querySelector('#why-view .why-lens .js-plotly-plot')"


def shows(page, text: str) -> None:
    page.wait_for_function(f"() => ({HEADING})().includes({text!r})", timeout=WAIT_MS)


def why_fresh(page, viewport: dict = WIDE) -> None:
    """The module's shared page (conftest.py: app_page) back where a newly opened one starts (`fresh`), the Why tab's
    attribution method too."""
    from attention_lab.attribution.methods import METHODS
    from attention_lab.why.feature import DEFAULT_METHOD

    open_tab(page, "Why")
    page.get_by_role("radio", name=METHODS[DEFAULT_METHOD].title, exact=True).check()
    fresh(page, viewport)


def test_the_why_tab_follows_the_shown_step_in_the_page_and_a_click_focuses_a_head(served_app, app_page):
    from playwright.sync_api import expect

    _, registry, _ = served_app
    config = registry.entry("de-en").pipeline.model.config
    page = app_page
    why_fresh(page)
    run(page, SOURCE)
    open_tab(page, "Why")
    page.wait_for_function(f"() => ({HEADING})().startsWith('Step ')", timeout=WAIT_MS)
    page.settle()
    grid = page.locator(AGREEMENT)
    assert grid.locator(".why-grid-layer").count() == config.n_decoder_layers
    assert grid.locator(".why-grid-cell").count() == config.n_decoder_layers * config.n_heads
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
    heads = config.n_heads
    grid.locator(f".why-grid-cell[data-layer='0'][data-head='{heads - 1}']").click()  # the first layer's last head
    expect(page.get_by_label("Focus head")).to_have_value(f"Layer 1 · Head {heads}", timeout=WAIT_MS)
    focused = grid.locator(".why-grid-cell.focused")  # drawn again, outlined
    expect(focused).to_have_count(1, timeout=WAIT_MS)
    assert (focused.get_attribute("data-layer"), focused.get_attribute("data-head")) == ("0", str(heads - 1))


def test_another_method_and_the_deletion_test_fill_in_after_the_click(app_page):
    from playwright.sync_api import expect

    page = app_page
    why_fresh(page, NARROW)
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


CONTRAST = "#why-contrast .why-contrast-view"


def why_not(page, step: int, label: str) -> None:
    """Show step `step` with the page's keys, then click the "why not this?" of the candidate labelled `label`."""
    page.locator("#now .lab-label").click()  # nothing focused that takes keys: the page's keys move the step
    page.keyboard.press("Home")
    for _ in range(step):
        page.keyboard.press("ArrowRight")
    page.wait_for_function(f"() => window.attentionLab.shown === {step}", timeout=WAIT_MS)
    row = page.locator(".candidates .candidate-row").filter(has=page.locator(".label", has_text=label)).first
    row.locator("button.why-not").click()


@pytest.mark.parametrize(("viewport", "start"), [(None, "Attention"), (NARROW, "Why")], ids=["wide", "narrow"])
def test_why_not_this_draws_the_contrast_in_the_why_tab_with_one_request(app_page, viewport, start):
    """From another tab, the click opens the Why tab (whose own event, and its fill, send nothing new); the click
    itself is one request, its contrast sent on the same stream or by the fill the page asks for."""
    from playwright.sync_api import expect

    page = app_page
    why_fresh(page, viewport or WIDE)
    run(page, SOURCE)
    open_tab(page, "Attention")
    page.settle()
    token = page.evaluate("() => window.attentionLab.decoding.steps[1].label")
    alternative = page.evaluate(
        "() => { const s = window.attentionLab.decoding.steps[1]; return s.top.find(([, id]) => id !== s.token)[0]; }"
    )
    open_tab(page, "Why")
    page.wait_for_function(f"() => ({HEADING})().startsWith('Step ')", timeout=WAIT_MS)
    open_tab(page, start)
    page.settle()
    sent = watch_requests(page)
    why_not(page, 2, alternative)
    heading = page.locator(f"{CONTRAST} .why-contrast-heading")
    expect(heading).to_contain_text(f"Why “{token}” and not “{alternative}”?", timeout=WAIT_MS)
    expect(page.locator(CONTRAST)).to_contain_text("logit")
    assert page.locator(f"{CONTRAST} .why-row").first.locator(".word").count() >= 5  # the source, in words
    page.settle()
    joins = [url for url in sent if "/queue/join" in url]
    # the click, and the tab's own select from elsewhere; and a fill only if the contrast took longer than SOON_S
    assert len(joins) - (0 if start == "Why" else 1) in (1, 2), joins
    quiet = watch_requests(page)
    heading.click()
    page.keyboard.press("ArrowRight")  # another step: the contrast (of step 2) is not drawn there
    expect(page.locator(CONTRAST)).to_have_count(0)
    page.keyboard.press("ArrowLeft")
    expect(heading).to_contain_text(f"and not “{alternative}”")
    button(page, "Back to the attribution").click()
    expect(page.locator(CONTRAST)).to_have_count(0)
    expect(page.locator("#why-view .why-heading")).to_contain_text("Step 2 wrote")
    assert [url for url in quiet if "/queue/join" in url] == [], quiet  # redraws are the page's own
    width = page.evaluate("() => document.documentElement.scrollWidth")
    assert width <= (viewport or WIDE)["width"], f"the page is {width} px wide"


DECODERLENS_ROWS = "#why-decoderlens .why-decoderlens-table tr"


def test_the_decoderlens_shows_each_encoder_layers_text_and_stays_drawn_on_back_and_step(served_app, browser):
    """One row per encoder layer (and the embeddings), the last the model's own output, marked; Back and Step leave
    the table as it was drawn (the server sends nothing for it); it fits 390 px. (A page of its own: Back and Step
    count the steps the page holds, which a shared page's earlier decodings may change.)"""
    from playwright.sync_api import expect

    url, registry, _ = served_app
    config = registry.entry("de-en").pipeline.model.config
    page = opened(browser, url, NARROW)
    run(page, SOURCE)
    open_tab(page, "Why")
    rows = page.locator(DECODERLENS_ROWS)
    expect(rows).to_have_count(config.n_encoder_layers + 2, timeout=WAIT_MS)  # the heading row, then each layer
    output = page.get_by_label("Output").input_value()
    own = page.locator(f"{DECODERLENS_ROWS}.why-decoderlens-own")
    expect(own.locator(".why-decoderlens-text")).to_have_text(output)
    expect(own.locator(".why-decoderlens-mark")).to_have_text("the model's output")
    expect(rows.nth(1).locator(".why-decoderlens-layer")).to_have_text("0 (embeddings)")
    page.evaluate("() => { document.querySelector('#why-decoderlens table').dataset.kept = 'yes'; }")
    n = page.evaluate("() => window.attentionLab.decoding.steps.length")
    for clicked, steps in (("Back", n - 1), ("Back", n - 2), ("Step", n - 1)):
        button(page, clicked).click()
        page.wait_for_function(f"() => window.attentionLab.decoding.steps.length === {steps}", timeout=WAIT_MS)
    page.settle()
    assert page.evaluate("() => document.querySelector('#why-decoderlens table').dataset.kept") == "yes"
    width = page.evaluate("() => document.documentElement.scrollWidth")
    assert width <= 390, f"the page is {width} px wide at 390 px"
