"""In Chromium: the Training tab's slider and Play change the snapshot's output, its cross-attention and the chart's
mark; a model without snapshots says so."""

import pytest

from tests.browser import NARROW, WAIT_MS, button, fresh, open_tab, pick_model, run
from transformer.snapshots import list_snapshots

pytestmark = pytest.mark.slow

FIXED = "abcdef12"
VIEW = "() => document.querySelector('#film .film-focus .js-plotly-plot')"
CHART = "() => document.querySelector('#film .film-chart .js-plotly-plot')"
INFO, OUTPUT = "#film .film-info", "#film .film-output"
# What the reader sees change: the marked snapshot on the chart, and the focused head's weights.
MARK = f"() => {{ const gd = ({CHART})(); return gd && gd.layout.shapes ? gd.layout.shapes[0].x0 + 0.4 : null; }}"
WEIGHTS = f"() => {{ const gd = ({VIEW})(); return gd && JSON.stringify(gd.data[gd.data.length - 1].z); }}"


def show_training(page):
    open_tab(page, "Training")
    mark_at(page, 0)
    page.settle()


def mark_at(page, index: int) -> None:
    """Wait until the chart marks this snapshot; past the wait, fail saying what the tab shows instead."""
    from playwright.sync_api import TimeoutError

    try:
        page.wait_for_function(f"() => ({MARK})() === {index}", timeout=WAIT_MS)
    except TimeoutError:
        shown = page.evaluate(
            f"""() => ({{mark: ({MARK})(), chart: !!({CHART})(),
                info: (document.querySelector('#film .film-info') || {{}}).innerText}})"""
        )
        raise AssertionError(f"the chart does not mark snapshot {index}: {shown}") from None


def move_slider(page, key: str) -> None:
    page.get_by_label("Snapshot").focus()
    page.keyboard.press(key)


def test_the_slider_changes_the_output_the_attention_and_the_mark(served_app, app_page):
    from playwright.sync_api import expect

    _, registry, _ = served_app
    n = len(list_snapshots(registry.entry("reverse").source))
    page = app_page
    fresh(page, model="reverse")
    run(page, FIXED)
    show_training(page)
    expect(page.locator(INFO)).to_contain_text("Step 0", timeout=WAIT_MS)
    untrained, weights = page.locator(OUTPUT).inner_text(), page.evaluate(WEIGHTS)
    assert untrained != f"Output of this snapshot: {FIXED[::-1]}"
    sent = []
    page.on("request", lambda request: sent.append(request.url))
    move_slider(page, "End")
    expect(page.locator(OUTPUT)).to_have_text(f"Output of this snapshot: {FIXED[::-1]}", timeout=WAIT_MS)
    expect(page.locator(INFO)).to_contain_text("the reverse model the other tabs show")
    mark_at(page, n - 1)
    assert page.evaluate(WEIGHTS) != weights
    move_slider(page, "Home")
    expect(page.locator(OUTPUT)).to_have_text(untrained, timeout=WAIT_MS)
    page.wait_for_function(f"() => ({WEIGHTS})() === {weights!r}", timeout=WAIT_MS)
    assert sent == [], f"the film asked the server: {sent}"  # every snapshot's decoding is in the page


def test_play_steps_through_the_snapshots_and_pause_stops_it(app_page):
    from playwright.sync_api import expect

    page = app_page
    fresh(page, model="reverse")
    show_training(page)
    button(page, "▶ Play").click()
    expect(button(page, "❚❚ Pause")).to_be_visible(timeout=WAIT_MS)
    page.wait_for_function(f"() => ({MARK})() >= 2", timeout=WAIT_MS)  # a snapshot a tick
    button(page, "❚❚ Pause").click()
    expect(button(page, "▶ Play")).to_be_visible(timeout=WAIT_MS)
    page.wait_for_timeout(1500)
    stopped = page.evaluate(MARK)
    page.wait_for_timeout(1500)  # more than a tick: nothing moves
    assert page.evaluate(MARK) == stopped


def test_a_model_without_snapshots_says_how_to_make_them_and_the_tab_fits_390_px(app_page):
    from playwright.sync_api import expect

    page = app_page
    fresh(page, NARROW)
    open_tab(page, "Training")  # de-en, the default model, ships no snapshots
    expect(page.locator(INFO)).to_contain_text("de-en has no training snapshots", timeout=WAIT_MS)
    expect(page.locator(INFO)).to_contain_text("--snapshots 10")
    pick_model(page, "reverse")
    mark_at(page, 0)
    width = page.evaluate("() => document.documentElement.scrollWidth")
    assert width <= 390, f"the page is {width} px wide at 390 px"
