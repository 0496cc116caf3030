"""Opening the app's page, as a person does, against opening Gradio's own floor, and with each plotly.js bundle.

    python benchmarks/page_open.py            # prints the table
    python benchmarks/page_open.py --write    # and puts it into benchmarks/RESULTS.md

In Chromium, a new page (its own context: nothing cached) on the app (app.py, on the bundled checkpoints) until its
first example's focused head is drawn, and on the floor (benchmarks/floor_app.py) until its Step button is there,
alternated in one run. The app's page is opened twice a round: with the plotly.js it serves (assets/vendor, the bundle
of the cartesian traces) and with plotly.py's full plotly.min.js put in its place (Playwright's route), so that the two
bundles are compared on the same server in the same minute. Each opening's time is the click-free wall time from the
address to the drawing; its CPU is what Chromium and Playwright's driver spent meanwhile (the processes under this
one, from /proc).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import time
from pathlib import Path

os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")
HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

from browser_speed import CHROMIUM_ARGS
from load import REPO, start_app
from results import put_block

FOCUS_DRAWN = "() => document.querySelector('#views .views-focus .js-plotly-plot')?.data?.length > 0"
TICK = os.sysconf("SC_CLK_TCK")


def cpu_below(root: int) -> float:
    """CPU seconds spent by the live processes under `root` (itself left out), and by the children they reaped."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                fields = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            children.setdefault(int(fields[1]), []).append(int(entry))
    total, stack = 0, list(children.get(root, []))
    while stack:
        pid = stack.pop()
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += sum(int(value) for value in fields[11:15])  # utime, stime, cutime, cstime
        stack += children.get(pid, [])
    return total / TICK


def opened(browser, url: str, drawn: str, full_plotly: bytes | None = None) -> tuple[float, float]:
    """Open `url` in a fresh context until `drawn` (a script) is true: (wall ms, CPU s)."""
    context = browser.new_context(viewport={"width": 1440, "height": 900})
    if full_plotly is not None:
        context.route(
            "**/plotly-cartesian.min.js", lambda route: route.fulfill(body=full_plotly, content_type="text/javascript")
        )
    page = context.new_page()
    cpu, start = cpu_below(os.getpid()), time.perf_counter()
    page.goto(url, wait_until="commit")
    page.wait_for_function(drawn, polling=20, timeout=120_000)
    wall = (time.perf_counter() - start) * 1000
    spent = cpu_below(os.getpid()) - cpu
    context.close()
    return wall, spent


def report(times: dict[str, list[tuple[float, float]]]) -> str:
    floor = statistics.median(wall for wall, _ in times["floor"])
    said = (
        f"Opening a page in Chromium, {len(times['floor'])} rounds alternated (`python benchmarks/page_open.py`): "
        "the app until its first example's focused head is drawn, the floor until its button is there."
    )
    lines = [
        said,
        "",
        "| page | median (ms) | min | max | ÷ floor | CPU, median (s) |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for name, label in (
        ("floor", "the floor (benchmarks/floor_app.py)"),
        ("app", "the app, its plotly.js (the cartesian bundle, 1.5 MB)"),
        ("app_full", "the app, plotly.py's plotly.min.js in its place (4.8 MB)"),
    ):
        walls, cpus = [wall for wall, _ in times[name]], [cpu for _, cpu in times[name]]
        lines.append(
            f"| {label} | {statistics.median(walls):.0f} | {min(walls):.0f} | {max(walls):.0f} | "
            f"{statistics.median(walls) / floor:.2f} | {statistics.median(cpus):.2f} |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    import plotly
    from playwright.sync_api import sync_playwright

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=6, help="openings of each page")
    parser.add_argument("--write", action="store_true", help="put the table into benchmarks/RESULTS.md")
    args = parser.parse_args(argv)
    full = (Path(plotly.__file__).parent / "package_data" / "plotly.min.js").read_bytes()
    servers = []
    try:
        app_server, app_url = start_app(REPO / "app.py")
        floor_server, floor_url = start_app(HERE / "floor_app.py")
        servers = [app_server, floor_server]
        times: dict[str, list[tuple[float, float]]] = {"floor": [], "app": [], "app_full": []}
        with sync_playwright() as p:
            browser = p.chromium.launch(
                executable_path=shutil.which("chromium") or "/usr/bin/chromium", args=CHROMIUM_ARGS
            )
            opened(browser, app_url, FOCUS_DRAWN)  # the first opening also waits for the app's own start
            for _ in range(args.rounds):
                times["floor"].append(opened(browser, floor_url, "() => !!document.querySelector('button')"))
                times["app"].append(opened(browser, app_url, FOCUS_DRAWN))
                times["app_full"].append(opened(browser, app_url, FOCUS_DRAWN, full))
            browser.close()
    finally:
        for server in servers:
            server.terminate()
            server.wait(timeout=30)
    table = report(times)
    print(table)
    if args.write:
        put_block("page_open", table)
    return 0


if __name__ == "__main__":
    sys.exit(main())
