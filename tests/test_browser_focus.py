"""In Chromium: a click on a head's tile in the grid focuses that head, and the focused head and the whole view
export; the offline view works with no network at all."""

import re
from pathlib import Path

import pytest

from attention_lab.models.examples import first_example
from tests.browser import FOCUSED, GRID, TILE_CENTRE, TITLE, WAIT_MS, button, fresh, run

pytestmark = pytest.mark.slow


def opening_run(page, registry) -> None:
    """The module's shared page (conftest.py: app_page) as a newly opened one shows it: the first example Run."""
    fresh(page)
    run(page, first_example(registry, "de-en"))


def test_a_click_on_a_tile_focuses_that_head(served_app, app_page):
    from playwright.sync_api import expect

    page = app_page
    opening_run(page, served_app[1])
    x, y = page.evaluate(TILE_CENTRE, [1, 2])  # layer 2, head 3
    page.mouse.click(x, y)
    expect(page.get_by_label("Focus head")).to_have_value("Layer 2 · Head 3", timeout=WAIT_MS)
    page.wait_for_function(f"() => ({TITLE})() === 'Cross-attention: layer 2, head 3'", timeout=WAIT_MS)
    page.wait_for_function(f"() => ({GRID})().dataset.focus === '1,2'", timeout=WAIT_MS)  # its tile framed
    x, y = page.evaluate(TILE_CENTRE, [0, 0])
    page.mouse.click(x + 1, y - 1)  # not quite at the centre: still that tile
    expect(page.get_by_label("Focus head")).to_have_value("Layer 1 · Head 1", timeout=WAIT_MS)


def test_the_focused_head_exports_as_png_and_svg_and_the_view_as_offline_html(served_app, app_page, browser, tmp_path):
    page = app_page
    opening_run(page, served_app[1])
    for name, start in (("SVG", b"<svg"), ("PNG", b"\x89PNG")):
        with page.expect_download(timeout=WAIT_MS) as download:
            button(page, name).click()
        assert Path(download.value.path()).read_bytes().startswith(start), name
    page.get_by_label("Focus head").select_option("Layer 2 · Head 1")
    page.wait_for_function(f"() => ({TITLE})().endsWith('layer 2, head 1')", timeout=WAIT_MS)
    drawn = page.evaluate(f"() => JSON.stringify(({FOCUSED})())")
    shown = page.evaluate("() => window.attentionLab.shown")
    page.get_by_text("Export", exact=True).click()
    button(page, "Whole view as HTML (works offline)").click()
    with page.expect_download(timeout=WAIT_MS) as download:
        page.locator("a[download]").last.click(timeout=WAIT_MS)
    html = tmp_path / "export.html"
    html.write_bytes(Path(download.value.path()).read_bytes())
    assert not re.search(r"<script[^>]+src=", html.read_text(encoding="utf-8")), "an export must not fetch scripts"

    offline = browser.new_page(viewport={"width": 1400, "height": 1000})
    asked = []
    web = lambda url: not url.startswith("file:")
    offline.route(web, lambda route: (asked.append(route.request.url), route.abort()))  # no network at all
    offline.goto(html.as_uri())
    offline.wait_for_function(f"() => ({FOCUSED})() !== null && ({GRID})() !== null", timeout=WAIT_MS)
    # the page's own views, as it looked when exported: the step shown, the focused head
    assert offline.evaluate(f"() => JSON.stringify(({FOCUSED})())") == drawn
    assert offline.evaluate("() => window.attentionLab.shown") == shown
    assert offline.get_by_label("Focus head").input_value() == "Layer 2 · Head 1"
    assert offline.locator(".now-view .word").count() > 0 and "wrote" in offline.locator(".now-view").inner_text()
    offline.get_by_label("Show step").fill("1")  # the step can still be changed, the kind too
    offline.wait_for_function("() => document.querySelector('.now-view').innerText.includes('Step 1 wrote')")
    offline.locator(".views-kind[data-kind=encoder]").click()
    offline.wait_for_function(f"() => ({TITLE})().startsWith('Encoder self-attention')", timeout=WAIT_MS)
    assert asked == []
    offline.close()
