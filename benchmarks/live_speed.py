"""The live page (attention-lab export --live) against Gradio's own floor and against the app under load.

    python benchmarks/live_speed.py            # prints the table
    python benchmarks/live_speed.py --write    # and puts it into benchmarks/RESULTS.md

In Chromium, with the live de-en file opened from disk: opening it to the first drawn heatmap; a Step (click to the
page's last DOM change, a MutationObserver, as browser_speed.py times the app) on the 15-word sentence of the
browser table, alternated with the floor's one-plot redraw (benchmarks/floor_app.py) in the same run; a Run of it
to the end; the page's JavaScript heap after 20 Runs. Then the app (app.py) with 30 gradio_client sessions pressing
Step at once (p50, p95), beside the live page, which puts no work on a server at all.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")
HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

from browser_page import CLICK, WATCH, click_ms, open_page, settle
from browser_speed import CHROMIUM_ARGS, STEP_TEXT
from load import REPO, Request, percentile, start_app
from results import put_block

SESSIONS = 30
STEPS_EACH = 5
BARS = {"step": 0.3}  # a Step, to the floor; a Run ≤ 0.5 s and opening ≤ 3 s are absolute
LIVE_CLICK = """id => {
  window.__lab.last = 0;
  window.__lab.t0 = performance.now();
  document.getElementById(id).click();
}"""


def live_page(browser, path: Path, width: int = 1400, height: int = 1000):
    """The live file opened, its example decoded; and the seconds from navigation to its first drawn heatmap."""
    context = browser.new_context(viewport={"width": width, "height": height}, offline=True)
    page = context.new_page()
    began = time.perf_counter()
    page.goto(path.as_uri(), wait_until="commit")
    page.wait_for_selector("[data-part=views] .js-plotly-plot .heatmaplayer", timeout=120_000)
    opened = time.perf_counter() - began
    page.wait_for_function("document.body.dataset.busy === 'false' && !!window.attentionLabLive", timeout=120_000)
    page.evaluate(WATCH)
    settle(page)
    return page, opened


def source(page, text: str) -> None:
    page.fill("#lab-source", text)
    settle(page)


def live_ms(page, id_: str) -> float:
    return click_ms(page, id_, LIVE_CLICK)


def heap_mb(page) -> float:
    session = page.context.new_cdp_session(page)
    session.send("Performance.enable")
    session.send("HeapProfiler.collectGarbage")
    metrics = {m["name"]: m["value"] for m in session.send("Performance.getMetrics")["metrics"]}
    return metrics["JSHeapUsedSize"] / 1e6


def measure_page(browser, live: Path, floor_url: str, repeats: int) -> dict:
    times = {"floor": [], "step": [], "run": [], "open": []}
    floor = open_page(browser, floor_url)
    click_ms(floor, "Step", CLICK)  # loads plotly
    for _ in range(3):
        page, opened = live_page(browser, live)
        times["open"].append(opened * 1000)
        page.context.close()
    page, _ = live_page(browser, live)
    source(page, STEP_TEXT)
    live_ms(page, "lab-reset")
    live_ms(page, "lab-step")  # the first step encodes the source
    for _ in range(repeats):
        times["floor"].append(click_ms(floor, "Step", CLICK))
        times["step"].append(live_ms(page, "lab-step"))
    heap = [heap_mb(page)]
    for i in range(20):
        live_ms(page, "lab-reset")
        ran = live_ms(page, "lab-run")
        if i < repeats // 2:
            times["run"].append(ran)
            times["floor"].append(click_ms(floor, "Step", CLICK))
    heap.append(heap_mb(page))
    requests = page.evaluate(
        "performance.getEntriesByType('resource').filter(e => !/^(file|blob|data):/.test(e.name)).length"
    )
    return {"times": times, "heap": heap, "requests": requests}


def steps_at_once(url: str, sessions: int = SESSIONS, steps: int = STEPS_EACH) -> list[float]:
    """`sessions` gradio_client sessions, each a Run's worth of Steps pressed one after another, all at once: each
    Step's seconds."""
    from gradio_client import Client

    clients = [Client(url, verbose=False) for _ in range(sessions)]
    start, lock, latencies = threading.Barrier(sessions), threading.Lock(), []

    def user(client) -> None:
        start.wait()
        for _ in range(steps):
            began = time.perf_counter()
            Request("step", "de-en", STEP_TEXT).call(client)
            with lock:
                latencies.append(time.perf_counter() - began)

    threads = [threading.Thread(target=user, args=(c,)) for c in clients]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return latencies


def row(name: str, ms: float, floor: float, bar: str, ok: bool) -> str:
    return f"| {name} | {ms:.0f} | {ms / floor:.2f} | {'✓' if ok else '✗'} {bar} |"


def report(page: dict, latencies: list[float], size_mb: float) -> str:
    t = {name: statistics.median(v) for name, v in page["times"].items()}
    floor, n = t["floor"], {name: len(v) for name, v in page["times"].items()}
    p50, p95 = percentile(latencies, 0.5) * 1000, percentile(latencies, 0.95) * 1000
    heading = (
        f"Live page (de-en, one file of {size_mb:.1f} MB, opened from disk with the network off): Chromium, click to "
        f"the page's last DOM change, medians of {n['step']} Steps, {n['run']} Runs and {n['open']} openings; floor = "
        "benchmarks/floor_app.py, clicked alternately."
    )
    heap = (
        f"- The page's JavaScript heap: {page['heap'][0]:.1f} MB after its first Step, {page['heap'][1]:.1f} MB after "
        f"20 Runs more. Requests to any server while it ran: {page['requests']}."
    )
    load = (
        f"- The app (app.py, 2 requests decoding at once) with {SESSIONS} gradio_client sessions each pressing Step "
        f"{STEPS_EACH} times at once: p50 {p50:.0f} ms, p95 {p95:.0f} ms a Step. The live page puts no work on a "
        "server: each visitor's Step runs in their own browser."
    )
    return "\n".join(
        [
            heading,
            "",
            "| live page measure | median (ms) | ratio to floor | bar |",
            "|---|---|---|---|",
            f"| floor: bare Gradio app, one tiled heatmap | {floor:.0f} | 1.00 | |",
            row(
                "Step (de-en, 15 words), live page",
                t["step"],
                floor,
                "≤ 0.3×; 0 server requests",
                t["step"] / floor <= BARS["step"],
            ),
            row("Run of that sentence to the end, live page", t["run"], floor, "≤ 0.5 s", t["run"] <= 500),
            row("Open the file (from disk) to the first drawn heatmap", t["open"], floor, "≤ 3 s", t["open"] <= 3000),
            "",
            heap,
            load,
        ]
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=12, help="Steps measured (Runs: half as many)")
    parser.add_argument("--write", action="store_true", help="put the table into benchmarks/RESULTS.md")
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    from attention_lab.export.live import write

    live = write("de-en", Path(tempfile.mkdtemp(prefix="attention-live-")) / "de-en.html")
    floor_server, floor_url = start_app(HERE / "floor_app.py")
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
            page = measure_page(browser, live, floor_url, args.repeats)
            browser.close()
    finally:
        floor_server.terminate()
    app, url = start_app(REPO / "app.py")
    try:
        latencies = steps_at_once(url)
    finally:
        app.terminate()
    table = report(page, latencies, live.stat().st_size / 1e6)
    print(table)
    if args.write:
        put_block("live", table)


if __name__ == "__main__":
    main()
