"""What the browser tests share: opening the served app in Chromium as a person would, waiting for its answers, and
reading what the page drew (the Attention tab's focused head and grid, the shown step, the now-view)."""

from __future__ import annotations

import json
from pathlib import Path

SCREENSHOTS = Path(__file__).resolve().parent / "screenshots"  # git-ignored: for a person to look at
WAIT_MS = 30_000
WIDE, NARROW = {"width": 1400, "height": 1000}, {"width": 390, "height": 844}
LAPTOP, PROJECTOR = {"width": 1440, "height": 900}, {"width": 1280, "height": 720}
FOCUS = "() => document.querySelector('#views .views-focus .js-plotly-plot')"  # the focused head's figure
GRID = "() => document.querySelector('#views .views-grid canvas.tiles')"  # every head, tiled (core/tiles.mjs)
# the centre of a head's tile in the grid (0-based layer and head), on the screen
TILE_CENTRE = f"""([layer, head]) => {{
  const canvas = ({GRID})(), g = canvas.geometry, t = g.tiles, box = canvas.getBoundingClientRect();
  return [box.left + g.l + (head * (t.K + t.gapK) + t.K / 2) * g.cellW,
          box.top + g.t + (layer * (t.Q + t.gapQ) + t.Q / 2) * g.cellH];
}}"""
FOCUSED = f"() => {{ const gd = ({FOCUS})(); return gd && gd.data.length ? gd.data[0].customdata : null; }}"
TITLE = f"() => {{ const gd = ({FOCUS})(); return gd && gd.layout.title ? gd.layout.title.text : null; }}"
FOCUS_X = f"() => {{ const gd = ({FOCUS})(); return gd && gd.data.length ? gd.data[0].x : null; }}"
SHOWN = "() => window.attentionLab ? window.attentionLab.shown : null"
# What was drawn last: the focused head's weights, its title, and the now-view's text.
DRAWN = f"() => JSON.stringify([({FOCUSED})(), ({TITLE})(), document.querySelector('.now-view')?.innerText])"
CANDIDATES = ".candidates .candidate"  # the next-token candidates, a button each


def settle(page, pending: list, quiet_ms: int = 300, limit_ms: int = 10_000) -> None:
    """Wait (at most `limit_ms`) until the page has had no queue request open for `quiet_ms`: its events answered.

    Only a pause: Gradio's answer stream now and then stays open for long, and every test checks what it needs."""
    quiet = 0
    for _ in range(limit_ms // 50):
        quiet = quiet + 50 if not pending else 0
        if quiet >= quiet_ms:
            return
        page.wait_for_timeout(50)


def opened(browser, url: str, viewport: dict = WIDE, wait_for_output: bool = True, road: str = "server"):
    """A new page on the app, once the events it sends on opening (its first example's run) have been answered.

    `road`: where the step loop decodes. "server" (the default) asks for the server (?road=server), so that a test of
    another feature does not spend two cores loading the runtime in every page it opens; "page" lets the page decode
    itself, as it does for a person (tests/test_browser_road.py, the typing test). tests/test_road.py holds the two
    roads equal."""
    from playwright.sync_api import expect

    if road == "server":
        url += ("&" if "?" in url else "?") + "road=server"
    page = browser.new_page(viewport=viewport)
    # a page module that failed to load or mount says so on the console (assets.mount): a test may read them
    page.module_errors = []
    page.on("console", lambda m: page.module_errors.append(m.text) if m.text.startswith("attention lab:") else None)
    page.on("pageerror", lambda err: page.module_errors.append(str(err)))
    pending = []
    page.on("request", lambda r: pending.append(r) if "/queue/" in r.url else None)
    for done in ("requestfinished", "requestfailed"):
        page.on(done, lambda r: pending.remove(r) if r in pending else None)
    page.settle = lambda: settle(page, pending)
    page.goto(url)
    page.wait_for_function("() => window.attentionLab !== undefined", timeout=WAIT_MS)
    if wait_for_output:
        expect(page.get_by_label("Output")).not_to_have_value("", timeout=WAIT_MS)
    page.settle()
    return page


def button(page, name: str):
    return page.get_by_role("button", name=name, exact=True)


def shot(page, name: str, full_page: bool = True) -> None:
    SCREENSHOTS.mkdir(exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / f"{name}.png"), full_page=full_page)


def run(page, text: str) -> None:
    """Type `text` as the Source and Run it; wait until the output changed and every answer has been drawn."""
    from playwright.sync_api import expect

    output = page.get_by_label("Output")
    before = output.input_value()
    page.get_by_label("Source").fill(text)
    button(page, "Run").click()
    expect(output).not_to_have_value(before, timeout=WAIT_MS)
    page.settle()


def pick_model(page, name: str) -> None:
    from playwright.sync_api import expect

    page.get_by_label("Model").click()
    page.get_by_role("option", name=name, exact=True).click()
    expect(page.get_by_label("Model")).to_have_value(name, timeout=WAIT_MS)
    page.settle()


def open_tab(page, name: str) -> None:
    """Open a tab; on a narrow screen the tabs that do not fit are behind a "More tabs" menu."""
    tab = page.get_by_role("tab", name=name, exact=True)
    if not tab.is_visible():
        page.get_by_role("button", name="More tabs").click()
        tab = page.get_by_role("button", name=name, exact=True).filter(visible=True).last
    tab.click()


def kind(page, name: str) -> None:
    """Show another kind of attention in the Attention tab: "cross", "encoder" or "decoder_self"."""
    page.locator(f".views-kind[data-kind={name}]").click()


def focus_x_is(page, labels: list[str]) -> None:
    """Wait until the focused head has exactly these column labels."""
    wanted = json.dumps(labels, ensure_ascii=False, separators=(",", ":"))  # as JSON.stringify writes it
    page.wait_for_function(f"() => JSON.stringify(({FOCUS_X})()) === {json.dumps(wanted)}", timeout=WAIT_MS)


def watch_requests(page) -> list[str]:
    """Every request the page sends from now on."""
    sent: list[str] = []
    page.on("request", lambda request: sent.append(request.url))
    return sent


def redrawn(page, before: str) -> str:
    page.wait_for_function(f"() => ({DRAWN})() !== {before!r}", timeout=WAIT_MS)
    return page.evaluate(DRAWN)


def in_view(page, box: dict | None, viewport: dict) -> bool:
    """Whether an element's bounding box lies entirely inside the viewport (the page not scrolled)."""
    return (
        box is not None
        and box["x"] >= 0
        and box["y"] >= 0
        and box["x"] + box["width"] <= viewport["width"] + 0.5
        and box["y"] + box["height"] <= viewport["height"] + 0.5
    )
