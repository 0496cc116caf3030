"""In Chromium: a click on a head's tile focuses that head, and the focused head and the whole view export."""

import re
from pathlib import Path

import pytest

from tests.test_browser import FIGURE, WAIT_MS, opened

pytestmark = pytest.mark.slow

TILE_CENTRE = f"""([layer, head]) => {{
  const gd = ({FIGURE})(), size = gd._fullLayout._size, box = gd.getBoundingClientRect();
  return [box.left + size.l + gd._fullLayout.xaxis.l2p(gd.layout.xaxis.tickvals[head]),
          box.top + size.t + gd._fullLayout.yaxis.l2p(gd.layout.yaxis.tickvals[layer])];
}}"""


def test_a_click_on_a_tile_focuses_that_head(served_app, browser):
    from playwright.sync_api import expect

    url, _, _ = served_app
    page = opened(browser, url)
    page.locator(".attention-view .js-plotly-plot").first.scroll_into_view_if_needed()
    page.mouse.wheel(0, 250)
    page.wait_for_timeout(300)
    x, y = page.evaluate(TILE_CENTRE, [1, 2])  # layer 2, head 3
    page.mouse.click(x, y)
    expect(page.get_by_label("Focus head")).to_have_value("Layer 2 · Head 3", timeout=WAIT_MS)
    page.wait_for_function(f"() => ({FIGURE})().layout.yaxis2.title.text === 'layer 2, head 3'", timeout=WAIT_MS)
    page.close()


def test_the_focused_head_exports_as_png_and_svg_and_the_view_as_offline_html(served_app, browser, tmp_path):
    url, _, _ = served_app
    page = opened(browser, url)
    page.get_by_text("Export", exact=True).click()
    for name, start in (("Focused head as SVG", b"<svg"), ("Focused head as PNG", b"\x89PNG")):
        with page.expect_download(timeout=WAIT_MS) as download:
            page.get_by_role("button", name=name).click()
        assert Path(download.value.path()).read_bytes().startswith(start), name
    drawn = page.evaluate(f"() => JSON.stringify(({FIGURE})().data[1].customdata)")
    page.get_by_role("button", name="Whole view as HTML (works offline)").click()
    with page.expect_download(timeout=WAIT_MS) as download:
        page.locator("a[download]").last.click(timeout=WAIT_MS)
    html = tmp_path / "export.html"
    html.write_bytes(Path(download.value.path()).read_bytes())
    assert not re.search(r"<script[^>]+src=", html.read_text(encoding="utf-8")), "an export must not fetch scripts"
    page.close()

    offline = browser.new_page(viewport={"width": 1400, "height": 1000})
    asked = []
    web = lambda url: not url.startswith("file:")
    offline.route(web, lambda route: (asked.append(route.request.url), route.abort()))  # no network at all
    offline.goto(html.as_uri())
    figures = "() => [...document.querySelectorAll('.attention-view')].filter(v => v.data && v.data.length === 2)"
    offline.wait_for_function(f"() => ({figures})().length === 3", timeout=WAIT_MS)  # every kind, drawn by views.js
    assert offline.evaluate("() => JSON.stringify(document.getElementById('cross-view').data[1].customdata)") == drawn
    expect_words = offline.locator(".now-view .word")
    assert expect_words.count() > 0 and "wrote" in offline.locator(".now-view").inner_text()
    offline.locator("#shown").fill("1")  # the step can still be changed
    offline.locator("#shown").dispatch_event("input")
    offline.wait_for_function("() => document.querySelector('.now-view').innerText.includes('Step 1 wrote')")
    assert asked == []
    offline.close()
