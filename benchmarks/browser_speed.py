"""What a user feels: time from a click until the page's last DOM change, in Chromium, against Gradio's own floor.

    python benchmarks/browser_speed.py            # prints the table
    python benchmarks/browser_speed.py --write    # and puts it into benchmarks/RESULTS.md
    python benchmarks/browser_speed.py --app OTHER/app.py   # another checkout's app (for before/after figures)

The floor is benchmarks/floor_app.py: a bare Gradio app whose button redraws one tiled plotly heatmap. Both apps run
in their own processes and are clicked alternately in one browser, so the ratios hold on a noisy machine. A click's
time ends at the last mutation of the page's DOM (a MutationObserver) that is followed by QUIET_MS of stillness.
Gradio's screen-reader announcements (an invisible ".sr-only" live region that it fills and empties on timers, up
to seconds after an event) are not changes a user sees, so they are left out, for both apps alike.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
from pathlib import Path

os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")
HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from load import REPO, start_app
from results import put_block

CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
]
QUIET_MS = 1000  # no DOM change for this long after the last one: the page has settled
STEP_TEXT = "Ich habe gestern Abend mit meinem Bruder lange über die Zukunft unserer kleinen Firma gesprochen."
TEN_WORDS = "Die Datei wurde gestern von einem anderen Benutzer geändert und gespeichert."
PARAGRAPH = (  # 60 words
    "Wählen Sie bitte die Zellen aus, die Sie formatieren möchten, und klicken Sie dann auf Format. "
    "Im Dialog können Sie die Schriftart, die Größe und die Farbe des Textes ändern. "
    "Die neuen Einstellungen gelten dann für alle markierten Zellen des aktuellen Tabellenblatts. "
    "Um die Formatierung wieder zu entfernen, wählen Sie die Zellen erneut aus und klicken Sie dann auf Standard."
)
BARS = {  # ratios to the floor
    "step": 1.5,
    "run": 2.5,
    "heads_run": 2.5,
    "ablate": 2.5,
    "edit": 2.5,
    "training_open": 2.5,
    "snapshot": 1.5,
}
FILM_TEXT = "abcdef12"  # the reversal model's Training tab
TIME_BARS_S = {"first_run": 2.0, "paragraph": 3.0}

WATCH = """() => {
  window.__lab = {t0: 0, last: 0};
  const seen = m => {
    const el = m.target.nodeType === 1 ? m.target : m.target.parentElement;
    return !(el && el.closest('.sr-only'));
  };
  new MutationObserver(ms => { if (ms.some(seen)) window.__lab.last = performance.now(); })
    .observe(document.body, {subtree: true, childList: true, attributes: true, characterData: true});
}"""
CLICK = """name => {
  // not gradio's copies of the tab buttons (for its overflow menu), which are out of the tab order
  const button = [...document.querySelectorAll('button')].find(b => b.tabIndex !== -1 && b.innerText.trim() === name);
  window.__lab.last = 0;
  window.__lab.t0 = performance.now();
  button.click();
}"""
CLICK_WORD = """n => {
  const word = document.querySelectorAll('.now-view .word')[n];
  window.__lab.last = 0;
  window.__lab.t0 = performance.now();
  word.click();
}"""
MOVE_SNAPSHOT = """n => {
  const range = document.querySelector('#snapshot input[type=range]');
  window.__lab.last = 0;
  window.__lab.t0 = performance.now();
  range.value = n;
  range.dispatchEvent(new Event('input', {bubbles: true}));
}"""
SETTLED = "q => window.__lab.last > window.__lab.t0 && performance.now() - window.__lab.last > q"


def settle(page) -> None:
    """Wait until the page has not changed for QUIET_MS (after loading, or after a click)."""
    page.evaluate("() => { window.__lab.last = performance.now(); window.__lab.t0 = window.__lab.last - 1; }")
    page.wait_for_function(SETTLED, arg=QUIET_MS, polling=50, timeout=120_000)


def click_ms(page, name: str, script: str = CLICK) -> float:
    """Milliseconds from clicking the button labelled `name` (or what `script` clicks) to the page's last DOM
    change."""
    page.evaluate(script, name)
    page.wait_for_function(SETTLED, arg=QUIET_MS, polling=50, timeout=120_000)
    return page.evaluate("() => window.__lab.last - window.__lab.t0")


def open_page(browser, url: str, width: int = 1400):
    page = browser.new_context(viewport={"width": width, "height": 1000}).new_page()
    page.goto(url)
    page.wait_for_selector("button", timeout=60_000)
    page.evaluate(WATCH)
    settle(page)
    return page


def set_source(page, text: str) -> None:
    page.get_by_label("Source").fill(text)
    settle(page)


def measure(browser, app_url: str, floor_url: str, repeats: int) -> dict[str, list[float]]:
    """Every measure's samples in ms; app and floor clicks alternate."""
    times: dict[str, list[float]] = {name: [] for name in ("floor", "step", "run", "first_run", "paragraph")}
    floor, app = open_page(browser, floor_url), open_page(browser, app_url)
    click_ms(floor, "Step")  # the floor's first draw loads plotly
    click_ms(app, "Reset")
    set_source(app, STEP_TEXT)
    click_ms(app, "Step")  # the first step encodes the source and draws every view
    for _ in range(repeats):
        times["floor"].append(click_ms(floor, "Step"))
        times["step"].append(click_ms(app, "Step"))
    set_source(app, TEN_WORDS)
    for _ in range(max(3, repeats // 2)):
        click_ms(app, "Reset")
        times["floor"].append(click_ms(floor, "Step"))
        times["run"].append(click_ms(app, "Run"))
    set_source(app, PARAGRAPH)
    for _ in range(3):
        click_ms(app, "Reset")
        times["paragraph"].append(click_ms(app, "Run"))
    measure_lens(app, floor, times)
    measure_training(app, floor, times)
    for _ in range(3):
        fresh = open_page(browser, app_url)
        set_source(fresh, TEN_WORDS)
        times["first_run"].append(click_ms(fresh, "Run"))
        fresh.context.close()
    return times


def measure_lens(app, floor, times: dict[str, list[float]]) -> None:
    """The lens on the 10-word sentence: a Run with the Heads tab open (summary and every head ablated in turn),
    Ablate (every cross head of layer 3), and an edit (a click on a source word at the shown step)."""
    times.update(heads_run=[], ablate=[], edit=[])
    set_source(app, TEN_WORDS)
    click_ms(app, "Heads")
    for _ in range(3):
        click_ms(app, "Reset")
        times["floor"].append(click_ms(floor, "Step"))
        times["heads_run"].append(click_ms(app, "Run"))
    app.get_by_label("Heads to ablate").click()
    app.get_by_role("option", name="Cross · Layer 3 · all heads", exact=True).click()
    app.keyboard.press("Escape")
    settle(app)
    for _ in range(3):
        times["floor"].append(click_ms(floor, "Step"))
        times["ablate"].append(click_ms(app, "Ablate"))
    click_ms(app, "Cross-attention")
    for word in (1, 3, 5):
        times["floor"].append(click_ms(floor, "Step"))
        times["edit"].append(click_ms(app, word, CLICK_WORD))


def measure_training(app, floor, times: dict[str, list[float]]) -> None:
    """The Training tab on the reversal model: opening it (every snapshot decodes the source) and a move of its
    slider to another snapshot (a redraw of the output, the attention and the chart)."""
    times.update(training_open=[], snapshot=[])
    app.get_by_label("Model").click()
    app.get_by_role("option", name="reverse", exact=True).click()
    settle(app)
    for i in range(3):
        set_source(app, FILM_TEXT[: 6 + i])  # a new source each time: nothing decoded yet
        times["floor"].append(click_ms(floor, "Step"))
        times["training_open"].append(click_ms(app, "Training"))
        click_ms(app, "Beams")
    click_ms(app, "Training")
    for n in (3, 6, 9):
        times["floor"].append(click_ms(floor, "Step"))
        times["snapshot"].append(click_ms(app, n, MOVE_SNAPSHOT))


def report(times: dict[str, list[float]], label: str) -> str:
    med = {name: statistics.median(values) for name, values in times.items()}
    floor = med["floor"]
    heading = (
        f"Browser ({label}): Chromium, click to the page's last DOM change, medians of "
        f"{len(times['step'])} Steps, {len(times['run'])} Runs and 3 of the others; floor = "
        "benchmarks/floor_app.py, clicked alternately."
    )
    lines = [
        heading,
        "",
        "| browser measure | median (ms) | ratio to floor | bar |",
        "|---|---|---|---|",
        f"| floor: bare Gradio app, one tiled heatmap | {floor:.0f} | 1.00 | |",
    ]
    ratios = (
        ("step", "Step (de-en, 15 words)"),
        ("run", "Run, 10-word sentence"),
        ("heads_run", "Run, 10 words, Heads tab open (summary + every head ablated in turn)"),
        ("ablate", "Ablate (cross layer 3), 10 words"),
        ("edit", "Edit: click a source word, 10 words"),
        ("training_open", "Open the Training tab (reverse: every snapshot decodes the source)"),
        ("snapshot", "Move the Training slider to another snapshot"),
    )
    for name, words in ratios:
        ratio = med[name] / floor
        ok = "✓" if ratio <= BARS[name] else "✗"
        lines.append(f"| {words} | {med[name]:.0f} | {ratio:.2f} | {ok} ≤ {BARS[name]}× |")
    for name, words in (("first_run", "first Run after the page loads"), ("paragraph", "Run, 60-word paragraph")):
        ok = "✓" if med[name] <= 1000 * TIME_BARS_S[name] else "✗"
        lines.append(f"| {words} | {med[name]:.0f} | {med[name] / floor:.2f} | {ok} ≤ {TIME_BARS_S[name]:g} s |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    from playwright.sync_api import sync_playwright

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--app", type=Path, default=REPO / "app.py", help="the app to measure")
    parser.add_argument("--repeats", type=int, default=12, help="Steps measured (Runs: half as many)")
    parser.add_argument("--write", action="store_true", help="put the table into benchmarks/RESULTS.md")
    args = parser.parse_args(argv)
    servers = []
    try:
        app_server, app_url = start_app(args.app.resolve())
        floor_server, floor_url = start_app(HERE / "floor_app.py")
        servers = [app_server, floor_server]
        chromium = shutil.which("chromium") or "/usr/bin/chromium"
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=chromium, args=CHROMIUM_ARGS)
            times = measure(browser, app_url, floor_url, args.repeats)
            browser.close()
    finally:
        for server in servers:
            server.terminate()
            server.wait(timeout=30)
    table = report(times, "this checkout" if args.app.resolve() == REPO / "app.py" else str(args.app))
    print(table)
    if args.write:
        put_block("browser", table)
    return 0


if __name__ == "__main__":
    sys.exit(main())
