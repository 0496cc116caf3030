"""A static Space of several models (attention-lab export --live de-en reverse -o DIR/), served by http.server.

    python benchmarks/space_speed.py                      # de-en and reverse
    python benchmarks/space_speed.py --models reverse     # any models export --live takes
    python benchmarks/space_speed.py --models de-en reverse OPUS/ --precision float32 float32 int8   # one each

In Chromium, with the cache empty: the folder's size; open → the first heatmap (the example the export decoded,
drawn before the model loads); open → the first model decoded in the page; open → every tab it lists made in the
page and drawn (each opened in turn, its message made: decoding/explaining.mjs measures each); then each other model
chosen in the Model menu → decoded in the page, → every tab it lists drawn. Each tab after a beam Run (the Beams
tab lists a beam search). Absolute times: there is no server to compare with.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")
HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

from browser_speed import CHROMIUM_ARGS
from static_host import served

READY = "() => document.body.dataset.busy === 'false' && !!window.attentionLabLive"
MADE = "(tab) => performance.getEntriesByName('road:explain:' + tab).length"


def every_tab(page) -> str:
    """A beam Run, then each tab the chosen model lists opened until its message is made: how many tabs, and the two
    that took longest to be made, in words."""
    page.select_option("#lab-strategy", "beam")
    page.click("#lab-run")
    page.wait_for_function(READY, timeout=300_000)
    tabs = page.locator("#lab-tabs button:not([hidden])").evaluate_all("bs => bs.map((b) => b.dataset.tabId)")[1:]
    took = {}
    for tab in tabs:
        before, start = page.evaluate(MADE, tab), time.perf_counter()
        page.click(f"#lab-tabs button[data-tab-id={tab}]")
        page.wait_for_function(f"({MADE})('{tab}') > {before}", timeout=300_000)
        took[tab] = time.perf_counter() - start
    page.select_option("#lab-strategy", "greedy")
    page.click("#lab-tabs button[data-tab-id=attention]")
    slowest = sorted(took, key=took.get, reverse=True)[:2]
    return f"{len(tabs)} tabs; longest {', '.join(f'{tab} {took[tab]:.1f} s' for tab in slowest)}"


def measure(url: str, names: list[str]) -> list[tuple[str, float]]:
    from playwright.sync_api import sync_playwright

    rows = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1440, "height": 900})
        start = time.perf_counter()
        page.goto(url)
        page.wait_for_selector(".views-grid canvas.tiles", timeout=300_000)
        rows.append((f"open → first heatmap ({names[0]}, as exported)", time.perf_counter() - start))
        page.wait_for_function(READY, timeout=300_000)
        rows.append((f"open → {names[0]} decoded in the page", time.perf_counter() - start))
        said = every_tab(page)
        rows.append((f"open → every tab of {names[0]} made ({said})", time.perf_counter() - start))
        for name in names[1:]:
            start = time.perf_counter()
            page.select_option("#lab-model", name)
            page.wait_for_function(f"window.attentionLabLive.model.config.name === '{name}'", timeout=300_000)
            page.wait_for_function(READY, timeout=300_000)
            rows.append((f"{name} chosen → decoded in the page", time.perf_counter() - start))
            said = every_tab(page)
            rows.append((f"{name} chosen → every tab made ({said})", time.perf_counter() - start))
        browser.close()
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--models", nargs="+", default=["de-en", "reverse"], help="the models of the Space")
    parser.add_argument("--precision", nargs="+", help="one precision for all, or one per model (export --live's)")
    args = parser.parse_args()
    from attention_lab import tabs  # noqa: F401 - every feature registers the files a copy carries, as the CLI does
    from attention_lab.export.live import write

    with tempfile.TemporaryDirectory() as tmp:
        folder = write(args.models, Path(tmp) / "space", args.precision).parent
        size = sum(p.stat().st_size for p in folder.rglob("*") if p.is_file()) / 1e6
        server, url = served(folder)
        try:
            rows = measure(url, [Path(model.rstrip("/")).name for model in args.models])  # as the menu names them
        finally:
            server.terminate()
            server.wait(timeout=10)
    print(f"| a static Space of {', '.join(args.models)} | |\n|---|---:|\n| its folder | {size:.1f} MB |")
    for what, seconds in rows:
        print(f"| {what} | {seconds:.2f} s |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
