"""In Chromium: the Heads tab (a click on a cell focuses that head in its view), ablation, an edit made by clicking a
source word, and the readings."""

import re

import pytest

from attention_lab.models.examples import first_example
from tests.browser import GRID, NARROW, TITLE, WAIT_MS, button, fresh, kind, open_tab, run, summary_cell

pytestmark = pytest.mark.slow

HEADS = "#heads-summary"
DE_EN = ["entropy (nats)", "weight on special tokens", "KL when ablated"]  # its summary's measures


# Records whether the ablation's chart said it was being computed before it was drawn.
SEEN = """() => {
  const view = document.querySelector('#heads-effects');
  window.__seen = [];
  new MutationObserver(() => {
    const measuring = view.innerText.includes('Measuring');
    if (measuring && !window.__seen.length) window.__seen.push(true);
  }).observe(view, {subtree: true, childList: true, characterData: true});
}"""


def opening_run(page, registry, viewport: dict | None = None) -> None:
    """The module's shared page (conftest.py: app_page) as a newly opened one shows it: the first example Run."""
    fresh(page, *([viewport] if viewport else []))
    run(page, first_example(registry, "de-en"))


def show_heads(page, names: list[str]) -> None:
    """Open the Heads tab and wait until its summary's measures are `names`: the summary of the decoding shown (the
    one drawn for the decoding before may stand a moment, then its placeholder, as the tab opens)."""
    from playwright.sync_api import expect

    open_tab(page, "Heads")
    expect(page.locator(f"{HEADS} .summary-name")).to_have_text(names, timeout=WAIT_MS)
    page.locator("#heads-summary").scroll_into_view_if_needed()
    page.wait_for_timeout(300)


def test_the_head_summary_draws_every_kind_and_a_click_focuses_the_head_in_its_view(served_app, app_page):
    from playwright.sync_api import expect

    page = app_page
    opening_run(page, served_app[1])
    show_heads(page, DE_EN)  # de-en: no gold alignment
    summary_cell(page, HEADS, 0, "cross|Layer 2 · Head 3").click()  # entropy
    expect(page.get_by_role("tab", name="Attention", exact=True)).to_have_attribute(
        "aria-selected", "true", timeout=WAIT_MS
    )
    expect(page.get_by_label("Focus head")).to_have_value("Layer 2 · Head 3", timeout=WAIT_MS)
    expect(page.locator(".views-kind[data-kind=cross]")).to_have_attribute("aria-pressed", "true")
    page.wait_for_function(f"() => ({TITLE})() === 'Cross-attention: layer 2, head 3'", timeout=WAIT_MS)


def test_ablating_every_cross_head_shows_what_changed_at_each_step(app_page):
    from playwright.sync_api import expect

    page = app_page
    fresh(page, model="reverse")
    run(page, "abcdef12")
    show_heads(page, [*DE_EN[:2], "alignment accuracy", DE_EN[2]])  # reversal has a gold alignment
    page.get_by_label("Heads to ablate").click()
    page.get_by_role("option", name="All cross-attention heads").click()
    page.keyboard.press("Escape")
    page.evaluate(SEEN)
    button(page, "Ablate").click()
    expect(page.get_by_label("Before the ablation")).to_have_value("21fedcba", timeout=WAIT_MS)
    expect(page.get_by_label("Output")).not_to_have_value("21fedcba", timeout=WAIT_MS)
    expect(page.get_by_label("Notice")).to_have_value(re.compile("^Ablated throughout: all cross-attention heads"))
    bars = "() => document.querySelectorAll('#heads-effects .bars .point').length"
    page.wait_for_function(f"() => ({bars})() === 9", timeout=WAIT_MS)  # a bar per step: 8 characters and </s>
    assert page.evaluate("() => window.__seen") == [True]  # it said it was measuring, then drew the bars
    button(page, "Reset").click()
    expect(page.get_by_label("Before the ablation")).to_be_hidden(timeout=WAIT_MS)


def test_a_click_on_a_source_word_points_the_heads_at_it(app_page):
    from playwright.sync_api import expect

    page = app_page
    fresh(page, model="reverse")
    run(page, "abcdef12")  # shows step 8, which wrote "a" while looking at "a"
    page.locator(".now-view .word", has_text="c").click()
    expect(page.get_by_label("Before the edit")).to_have_value("21fedcba", timeout=WAIT_MS)
    # step 8 now writes "c", and the model, having written "c", reads on from there
    expect(page.get_by_label("Output")).to_have_value(re.compile("^21fedcbc"), timeout=WAIT_MS)
    notice = re.compile("^Edited: at step 8, all cross-attention heads looked only at “c”")
    expect(page.get_by_label("Notice")).to_have_value(notice)
    expect(page.locator(".now-view")).to_contain_text("Step 8 wrote c")


def test_the_readings_redraw_the_views(served_app, app_page):
    page = app_page
    opening_run(page, served_app[1])
    grid = f"() => ({GRID})()?.getAttribute('aria-label') || ''"
    page.get_by_label("Reading").select_option(label="Rollout")
    kind(page, "encoder")
    page.wait_for_function(f"() => ({grid})().includes('Rollout through each layer')", timeout=WAIT_MS)
    page.get_by_label("Reading").select_option(label="Value-weighted ‖α·v·W_o‖")
    page.wait_for_function(f"() => ({TITLE})().includes('Value-weighted')", timeout=WAIT_MS)


def test_the_heads_tab_fits_a_phone(served_app, app_page):
    page = app_page
    opening_run(page, served_app[1], NARROW)
    show_heads(page, DE_EN)
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
