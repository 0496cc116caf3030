"""The step loop in the page against the server's, in Chromium, each against Gradio's own floor in the same run.

    python benchmarks/road_speed.py                      # prints the table
    python benchmarks/road_speed.py --before OTHER/app.py   # also another checkout's app (its Step and first paint)
    python benchmarks/road_speed.py --write              # and puts it into benchmarks/RESULTS.md

Rows, on the 15-word de-en sentence of browser_speed.py unless said:
- Step in the app with the page decoding (decoding/in_page.mjs), and with the server decoding (`?road=server`, as the
  app decoded before); the server requests each sent;
- the page's own work per Step (the performance measure road.mjs makes around a click it answers: the decoder step,
  the messages and the views' redraw);
- a Run of 15 words in the page, and a Run with beam search of size 4 in the page;
- a Step in a live page (export --live, opened from disk);
- the first paint of the app (and of --before's), and the time from opening the app until the page decodes on its
  own (its copy loaded: road.mjs's mark).

A click's time ends at the page's last DOM change (browser_page.py's MutationObserver, QUIET_MS of stillness after
it), as in browser_speed.py; app and floor clicks alternate.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")
HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from browser_page import CLICK, click_ms, open_page, set_source, settle
from browser_speed import CHROMIUM_ARGS, STEP_TEXT
from load import REPO, start_app
from results import put_block

FIFTEEN_WORDS = STEP_TEXT  # 15 words; de-en writes 19 tokens for it
READY = "() => document.body.dataset.road === 'page'"
PAINT = "() => performance.getEntriesByName('first-contentful-paint')[0]?.startTime ?? null"
DECODES = "() => performance.getEntriesByName('road:ready:de-en')[0]?.startTime ?? null"
WORK = "() => performance.getEntriesByName('road:step', 'measure').map((m) => m.duration)"


def choose_beam(page, size: int) -> None:
    """Beam search of `size` in the Decoding options."""
    page.get_by_text("Decoding options").click()
    page.get_by_label("beam", exact=True).check()
    number = page.locator("#lab-beam-size input[type=number]")
    number.fill(str(size))
    number.press("Enter")
    settle(page)


def steps(page, floor, times: dict, name: str, repeats: int) -> None:
    """`repeats` Steps on the 15-word sentence, alternated with the floor's; the requests they sent."""
    click_ms(page, "Reset")
    set_source(page, FIFTEEN_WORDS)
    click_ms(page, "Step")  # the first step also encodes the source
    before = len(page.requests)
    for _ in range(repeats):
        times["floor"].append(click_ms(floor, "Step"))
        times[name].append(click_ms(page, "Step"))
    times[f"{name}_requests"] = [len([u for u in page.requests[before:] if "/queue/join" in u])]


def measure(browser, url: str, floor_url: str, repeats: int, before_url: str | None) -> dict[str, list[float]]:
    times: dict[str, list[float]] = {"floor": [], "step_page": [], "step_server": [], "run_page": [], "beam_page": []}
    live = live_page()
    floor = open_page(browser, floor_url)
    click_ms(floor, "Step")  # the floor's first draw loads plotly
    times.update(first_paint=[], decodes_on_its_own=[], first_paint_before=[])
    for _ in range(3):
        page = open_page(browser, url)
        page.wait_for_function(READY, timeout=120_000)
        times["first_paint"].append(page.evaluate(PAINT))
        times["decodes_on_its_own"].append(page.evaluate(DECODES))
        page.context.close()
        if before_url:
            old = open_page(browser, before_url)
            times["first_paint_before"].append(old.evaluate(PAINT))
            old.context.close()
    page = open_page(browser, url)
    page.wait_for_function(READY, timeout=120_000)
    steps(page, floor, times, "step_page", repeats)
    times["page_work"] = page.evaluate(WORK)[-repeats:]
    set_source(page, FIFTEEN_WORDS)
    for _ in range(3):
        click_ms(page, "Reset")
        times["floor"].append(click_ms(floor, "Step"))
        times["run_page"].append(click_ms(page, "Run"))
    choose_beam(page, 4)
    for _ in range(3):
        click_ms(page, "Reset")
        times["floor"].append(click_ms(floor, "Step"))
        times["beam_page"].append(click_ms(page, "Run"))
    page.context.close()
    server = open_page(browser, url + "?road=server")
    steps(server, floor, times, "step_server", repeats)
    server.context.close()
    if before_url:
        times["step_before"] = []
        old = open_page(browser, before_url)
        steps(old, floor, times, "step_before", repeats)
        old.context.close()
    times["step_live"] = []
    page = open_page(browser, live.as_uri())
    page.wait_for_function("() => document.body.dataset.busy === 'false'", timeout=120_000)
    settle(page)
    page.evaluate(CLICK, "Reset")
    settle(page)
    for _ in range(repeats):
        times["floor"].append(click_ms(floor, "Step"))
        times["step_live"].append(click_ms(page, "Step"))
    page.context.close()
    return times


def live_page() -> Path:
    """The de-en live page, as one file (made once)."""
    sys.path.insert(0, str(REPO))
    from attention_lab.export.live import write

    path = Path(tempfile.gettempdir()) / "attention-lab-benchmark-live" / "de-en.html"
    if not path.is_file():
        write("de-en", path)
    return path


ROWS = (
    ("step_page", "Step, the page decoding (15-word de-en sentence)", True),
    ("step_server", "Step, the server decoding (?road=server)", True),
    ("step_before", "Step, the app before (--before)", True),
    ("page_work", "the page's own work per Step (performance measure)", False),
    ("run_page", "Run, 15 words (19 tokens), the page decoding", True),
    ("beam_page", "Run, beam search of size 4, the page decoding", True),
    ("step_live", "Step in a live page (export --live, from disk)", True),
    ("first_paint", "first paint of the app (from opening it)", False),
    ("first_paint_before", "first paint of the app before (--before)", False),
    ("decodes_on_its_own", "from opening the app until the page decodes on its own", False),
)


def report(times: dict[str, list[float]]) -> str:
    floor = statistics.median(times["floor"])
    lines = [
        f"Floor (Gradio's one-plot redraw): median {floor:.0f} ms over {len(times['floor'])} clicks.",
        "",
        "| what | median ms | min–max ms | × floor | requests |",
        "|---|---:|---:|---:|---:|",
    ]
    for key, label, against_floor in ROWS:
        found = [t for t in times.get(key, []) if t is not None]
        if not found:
            continue
        ratio = f"{statistics.median(found) / floor:.2f}×" if against_floor else ""
        requests = times.get(f"{key}_requests", [""])[0]
        lines.append(
            f"| {label} | {statistics.median(found):.0f} | {min(found):.0f}–{max(found):.0f} | {ratio} | {requests} |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    from playwright.sync_api import sync_playwright

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=8, help="Steps measured on each road")
    parser.add_argument("--before", type=Path, help="another checkout's app.py, measured in the same run")
    parser.add_argument("--write", action="store_true", help="put the table into benchmarks/RESULTS.md")
    args = parser.parse_args(argv)
    servers = []
    try:
        app, url = start_app(REPO / "app.py")
        floor_server, floor_url = start_app(HERE / "floor_app.py")
        servers = [app, floor_server]
        before_url = None
        if args.before:
            old, before_url = start_app(args.before.resolve())
            servers.append(old)
        with sync_playwright() as p:
            browser = p.chromium.launch(
                executable_path=shutil.which("chromium") or "/usr/bin/chromium", args=CHROMIUM_ARGS
            )
            times = measure(browser, url, floor_url, args.repeats, before_url)
            browser.close()
    finally:
        for server in servers:
            server.terminate()
            server.wait(timeout=30)
    table = report(times)
    print(table)
    if args.write:
        put_block("road", table)
    return 0


if __name__ == "__main__":
    sys.exit(main())
