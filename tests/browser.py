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
# A summary of heads (core/grids.mjs) in the element `box`: its measures' names, and its cell of measure `measure`
# (0-based) for a head ("cross|Layer 2 · Head 3")
MEASURES = "box => [...document.querySelectorAll(`${box} .summary-name`)].map((b) => b.textContent)"


def summary_cell(page, box: str, measure: int, where: str):
    """The cell of measure `measure` (0-based) for the head `where` ("cross|Layer 2 · Head 3") in the summary of heads
    drawn in `box` (a selector)."""
    return page.locator(f"{box} .summary-grid:not(.summary-heads)").nth(measure).locator(f'[data-where="{where}"]')


FOCUSED = f"() => {{ const gd = ({FOCUS})(); return gd && gd.data.length ? gd.data[0].customdata : null; }}"
TITLE = f"() => {{ const gd = ({FOCUS})(); return gd && gd.layout.title ? gd.layout.title.text : null; }}"
FOCUS_X = f"() => {{ const gd = ({FOCUS})(); return gd && gd.data.length ? gd.data[0].x : null; }}"
SHOWN = "() => window.attentionLab ? window.attentionLab.shown : null"
# What was drawn last: the focused head's weights, its title, and the now-view's text.
DRAWN = f"() => JSON.stringify([({FOCUSED})(), ({TITLE})(), document.querySelector('.now-view')?.innerText])"
CANDIDATES = ".candidates .candidate"  # the next-token candidates, a button each
HELD_S = 3  # how long a test holds an answer's stream open after its answer (hold_next_stream)


def settle(page, pending: list, quiet_ms: int = 300, limit_ms: int = 10_000) -> None:
    """Wait (at most `limit_ms`) until the page has had no queue request open for `quiet_ms`: its events answered.

    Only a pause: Gradio's answer stream now and then stays open for long, and every test checks what it needs."""
    quiet = 0
    for _ in range(limit_ms // 50):
        quiet = quiet + 50 if not pending else 0
        if quiet >= quiet_ms:
            return
        page.wait_for_timeout(50)


def typed_source(page, text: str, served: bool = True) -> None:
    """`text` typed as the Source. A new Source is redrawn by the server (the Step button follows it): `served`, this
    waits until that change has been sent and answered. Its request can leave well after the typing (a change waits
    for the one before it to be answered), and a test that counts requests from here on must not count it."""
    source = page.get_by_label("Source")
    if not served or source.input_value() == text:  # the same text: no change, no request
        source.fill(text)
    else:
        carries = json.dumps(text, ensure_ascii=False)
        with page.expect_request(lambda r: "/queue/join" in r.url and carries in (r.post_data or ""), timeout=WAIT_MS):
            source.fill(text)
    page.settle()


def opened(browser, url: str, viewport: dict = WIDE, wait_for_output: bool = True, road: str = "server"):
    """A new page on the app, once the events it sends on opening (its first example's run) have been answered.

    `road`: where the step loop decodes. "server" (the default) asks for the server (?road=server), so that a test of
    another feature does not spend two cores loading the runtime in every page it opens; "page" lets the page decode
    itself, as it does for a person (tests/test_browser_road.py, the typing test). tests/test_road.py holds the two
    roads equal."""
    return ready(opening(browser, url, viewport, road), wait_for_output)


def opening(browser, url: str, viewport: dict = WIDE, road: str = "server"):
    """A new page on the app, asked for but not yet loaded (`ready` waits for it): several can load at once."""
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
    page.settle = lambda quiet_ms=300: settle(page, pending, quiet_ms)
    page.pending = pending  # the queue requests still open, for a failing test to say
    page.goto(url, wait_until="commit")
    return page


def ready(page, wait_for_output: bool = True):
    """A page from `opening`, once loaded and its opening events answered."""
    from playwright.sync_api import expect

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
    """Open a tab by its name, as a person taps it: every tab is in the row at every width (test_browser_tabs)."""
    page.get_by_role("tab", name=name, exact=True).click()


def kind(page, name: str) -> None:
    """Show another kind of attention in the Attention tab: "cross", "encoder" or "decoder_self"."""
    page.locator(f".views-kind[data-kind={name}]").click()


def focus_x_is(page, labels: list[str]) -> None:
    """Wait until the focused head has exactly these column labels."""
    wanted = json.dumps(labels, ensure_ascii=False, separators=(",", ":"))  # as JSON.stringify writes it
    page.wait_for_function(f"() => JSON.stringify(({FOCUS_X})()) === {json.dumps(wanted)}", timeout=WAIT_MS)


def watch_requests(page) -> list[str]:
    """Every request the page sends to the app's server from now on: its API and its files (/gradio_api/...), where
    anything the page asks of the server goes. Not the page's own address, which gradio's client may fetch again to
    read the app's config (seen once under a full run's load, with no event behind it)."""
    sent: list[str] = []
    page.on("request", lambda request: sent.append(request.url) if "/gradio_api/" in request.url else None)
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


LOOK = ("Focus head", "Reading")  # the Attention tab's own choices, which a test may change and Reset keeps


def shared(browser, url: str):
    """A page for a module's tests to share (opening one costs seconds of Gradio's and plotly's start-up): opened
    as `opened` opens it, with what it chose on opening kept for `fresh` to restore."""
    page = opened(browser, url)
    page.defaults = {label: page.get_by_label(label).input_value() for label in LOOK}
    page.example = page.get_by_label("Source").input_value()
    return page


def fresh(page, viewport: dict = WIDE, model: str = "de-en") -> None:
    """A shared page (`shared`) back where the module's tests start: at this screen size, no toast, Decoding options
    closed on greedy, the Attention tab on cross-attention with its choices as opened and pieces merged into words,
    `model` chosen with an example as the Source, nothing decoded (Reset), and the page scrolled to its top."""
    from playwright.sync_api import expect

    page.set_viewport_size(viewport)
    page.evaluate("() => document.querySelectorAll('[data-testid=toast-close]').forEach(b => b.click())")
    greedy = page.get_by_role("radio", name="greedy", exact=True)
    if greedy.is_visible():
        greedy.check()
        page.get_by_text("Decoding options", exact=True).click()
        expect(greedy).to_be_hidden(timeout=WAIT_MS)
    open_tab(page, "Attention")
    kind(page, "cross")
    page.get_by_label("Merge pieces into words").check()
    for label, value in page.defaults.items():
        page.get_by_label(label).select_option(value)
    if page.get_by_label("Model").input_value() != model:
        pick_model(page, model)  # the model's example as the Source
    elif model == "de-en":
        page.get_by_label("Source").fill(page.example)
    button(page, "Reset").click()
    try:
        expect(page.get_by_label("Output")).to_have_value("", timeout=WAIT_MS)
    except AssertionError as err:  # seen once, at a run's start, under load: what the page was doing says more
        raise AssertionError(f"{err}\nafter Reset: {doing(page)}") from None
    expect(page.get_by_test_id("toast-body")).to_have_count(0, timeout=WAIT_MS)
    page.settle()
    page.evaluate("() => window.scrollTo(0, 0)")


def doing(page) -> str:
    """What a page is doing, for a failing test to say: its queue requests still open, the step loop's buttons that
    are off, its Notice and its road's line."""
    off = [name for name in ("Run", "Step", "Back", "Reset") if button(page, name).is_disabled()]
    notice = page.get_by_label("Notice").input_value()
    road = page.evaluate("() => document.querySelector('.road-line')?.textContent ?? null")
    open_requests = [r.url.split("/gradio_api/")[-1] for r in page.pending]
    return f"open requests {open_requests}, buttons off {off}, notice {notice!r}, road line {road!r}"


def hold_next_stream(monkeypatch, seconds: float) -> None:
    """Keep the next answer's stream open `seconds` after its answer (before it waits for its slow outputs:
    page.lab.Lab.after), as a loaded server now and then does: gradio sends the stream's last part again as it ends,
    then, after what was answered meanwhile. Only the served app in this test process is held."""
    import time

    from attention_lab.page.lab import Lab

    after, holds = Lab.after, [seconds]

    def held(self, user, wait_s):
        if holds:
            time.sleep(holds.pop())  # the first stream to get here takes the hold (list.pop is atomic)
        return after(self, user, wait_s)

    monkeypatch.setattr(Lab, "after", held)
