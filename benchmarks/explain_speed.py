"""The explanation tabs made in the page against the server's, in Chromium, each against Gradio's own floor in the
same run.

    python benchmarks/explain_speed.py               # prints the table
    python benchmarks/explain_speed.py --write       # and puts it into benchmarks/RESULTS.md

For each tab the page makes itself (attention_lab/assets/in_page.json), with the tab open:
- a Step on the 15-word de-en sentence (browser_speed.py's), the page explaining, and on `?road=server` (as the app
  explained before); the server requests each sent;
- a Run of a new 10-word sentence, every step explained: until the tab is drawn (the page's last DOM change);
- Training on the reversal model (the model whose copy carries its snapshots), a 15-character string and new
  10-character ones: the Run films the new source with every snapshot;
- the page's own work of an explanation (the performance measure road:explain:TAB around the maker).
And the sizes: what the explanations' graphs add to each bundled model's page copy.

A click's time ends at the page's last DOM change (browser_page.py's MutationObserver, QUIET_MS of stillness after
it); app and floor clicks alternate.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
from pathlib import Path

os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")
HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from browser_page import click_ms, open_page, pick_model, set_source
from browser_speed import CHROMIUM_ARGS, STEP_TEXT
from load import REPO, start_app
from results import put_block

EXPLAINS = "() => /explains in this page/.test(document.querySelector('.road-line')?.textContent)"
SERVER = "() => document.body.dataset.road === 'server'"
ON = {"training": ("reverse", "abcdefghijklmno", ("qwertyuiop", "zxcvbnmasd", "poiuytrewq"))}  # tab -> its model
WORK = "tab => performance.getEntriesByName('road:explain:' + tab, 'measure').map((m) => m.duration)"
OTHER_TEN = (
    "Der alte Mann ging am Abend langsam mit seinem Hund spazieren.",
    "Wir haben im Sommer eine lange Reise durch die Berge gemacht.",
    "Die Kinder lesen jeden Morgen ein kurzes Buch in der Schule.",
)


def declared() -> dict:
    return json.loads((REPO / "attention_lab" / "assets" / "in_page.json").read_text(encoding="utf-8"))


def open_tab(page, title: str) -> None:
    page.get_by_role("tab", name=title, exact=True).click()


def tab_on(browser, url: str, title: str, road: str, model: str = "de-en"):
    """A page on `road` ("page": wait until it explains the tab itself) with `model` and the tab `title` open."""
    page = open_page(browser, url + ("?road=server" if road == "server" else ""))
    if model != "de-en":
        pick_model(page, model)
    if road == "page":
        page.wait_for_function("() => document.body.dataset.road === 'page'", timeout=180_000)
    open_tab(page, title)
    page.wait_for_function(EXPLAINS if road == "page" else SERVER, timeout=180_000)
    return page


def measure_tab(browser, url: str, floor, tab: str, title: str, repeats: int, times: dict) -> None:
    model, step_text, others = ON.get(tab, ("de-en", STEP_TEXT, OTHER_TEN))
    for road in ("page", "server"):
        page = tab_on(browser, url, title, road, model)
        click_ms(page, "Reset")
        set_source(page, step_text)
        click_ms(page, "Step")  # the first step also encodes the source
        before = len(page.requests)
        steps, runs = times.setdefault(f"{tab}_step_{road}", []), times.setdefault(f"{tab}_run_{road}", [])
        for _ in range(repeats):
            times["floor"].append(click_ms(floor, "Step"))
            steps.append(click_ms(page, "Step"))
        times[f"{tab}_step_{road}_requests"] = [len([u for u in page.requests[before:] if "/queue/join" in u])]
        before = len(page.requests)
        for text in others:
            set_source(page, text)
            click_ms(page, "Reset")
            times["floor"].append(click_ms(floor, "Step"))
            runs.append(click_ms(page, "Run"))
        times[f"{tab}_run_{road}_requests"] = [len([u for u in page.requests[before:] if "/queue/join" in u])]
        if road == "page":
            times[f"{tab}_work"] = page.evaluate(WORK, tab)
        page.context.close()


def sizes() -> dict[str, tuple[int, int, int, int]]:
    """Per bundled model: the bytes of its page copy without the explanations' graphs and its training snapshots,
    theirs, and the snapshots' (and how many)."""
    sys.path.insert(0, str(REPO))
    from attention_lab.models.registry import load_models
    from attention_lab.page_copy.analyses import graph_file
    from attention_lab.page_copy.copies import copy_files
    from attention_lab.page_copy.snapshots import FOLDER, loaded

    registry, found = load_models([]), {}
    for name in ("de-en", "reverse"):
        entry = registry.entries[name]
        training = loaded(registry.snapshots, name)
        files = copy_files(entry.pipeline, name, training=training)
        config = json.loads(files["config.json"])
        graphs = sum(len(files[graph_file(graph)]) for graph in config["analyses"])
        snapshots = sum(len(data) for file, data in files.items() if file.startswith(f"{FOLDER}/"))
        made = sum(1 for listed in config.get("snapshots", []) if listed["folder"])
        found[name] = (sum(len(data) for data in files.values()) - graphs - snapshots, graphs, snapshots, made)
    return found


def report(times: dict, tabs: dict, found: dict) -> str:
    floor = statistics.median(times["floor"])
    lines = [
        f"Floor (Gradio's one-plot redraw): median {floor:.0f} ms over {len(times['floor'])} clicks.",
        "",
        "| tab | what | in the page: median ms (× floor) | requests | on the server: median ms (× floor) | requests |",
        "|---|---|---:|---:|---:|---:|",
    ]
    for tab, title in tabs.items():
        for what, label in (("step", "Step, 15-word sentence"), ("run", "Run, a new 10-word sentence, drawn")):
            cells = []
            for road in ("page", "server"):
                found_times = times.get(f"{tab}_{what}_{road}", [])
                if not found_times:
                    cells += ["", ""]
                    continue
                median = statistics.median(found_times)
                cells += [f"{median:.0f} ({median / floor:.2f}×)", str(times[f"{tab}_{what}_{road}_requests"][0])]
            lines.append(f"| {title} | {label} | {' | '.join(cells)} |")
        work = times.get(f"{tab}_work") or []
        if work:
            lines.append(f"| {title} | the page's own work per explanation | {statistics.median(work):.0f} | | | |")
    lines += ["", "| page copy | the model | the explanations' graphs | share | its training snapshots |"]
    lines.append("|---|---:|---:|---:|---:|")
    for name, (rest, graphs, snapshots, made) in found.items():
        each = f"{snapshots / 1e6:.1f} MB: {made} × {snapshots / made / 1e6:.2f} MB" if made else "none"
        lines.append(f"| {name} | {rest / 1e6:.1f} MB | {graphs / 1e6:.2f} MB | {graphs / rest:.1%} | {each} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    from playwright.sync_api import sync_playwright

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=8, help="Steps measured on each road, for each tab")
    parser.add_argument("--tabs", nargs="*", help="only these tabs (ids)")
    parser.add_argument("--write", action="store_true", help="put the table into benchmarks/RESULTS.md")
    args = parser.parse_args(argv)
    here = declared()
    tabs = {tab: here["titles"][tab] for tab in here["tabs"] if not args.tabs or tab in args.tabs}
    servers = []
    try:
        app, url = start_app(REPO / "app.py")
        floor_server, floor_url = start_app(HERE / "floor_app.py")
        servers = [app, floor_server]
        times: dict[str, list] = {"floor": []}
        with sync_playwright() as p:
            browser = p.chromium.launch(
                executable_path=shutil.which("chromium") or "/usr/bin/chromium", args=CHROMIUM_ARGS
            )
            floor = open_page(browser, floor_url)
            click_ms(floor, "Step")  # the floor's first draw loads plotly
            for tab, title in tabs.items():
                measure_tab(browser, url, floor, tab, title, args.repeats, times)
            browser.close()
    finally:
        for server in servers:
            server.terminate()
            server.wait(timeout=30)
    table = report(times, tabs, sizes())
    print(table)
    if args.write:
        put_block("explain", table)
    return 0


if __name__ == "__main__":
    sys.exit(main())
