"""What a user feels: time from a click until the page's last DOM change, in Chromium, against Gradio's own floor.

    python benchmarks/browser_speed.py            # prints the table
    python benchmarks/browser_speed.py --write    # and puts it into benchmarks/RESULTS.md
    python benchmarks/browser_speed.py --app OTHER/app.py   # another checkout's app (for before/after figures)
    python benchmarks/browser_speed.py --no-large # without the two large transformers models (minutes to build)

The floor is benchmarks/floor_app.py: a bare Gradio app whose button redraws one tiled plotly heatmap. Both apps run
in their own processes and are clicked alternately in one browser, so the ratios hold on a noisy machine. A click's
time ends at the last mutation of the page's DOM (a MutationObserver) that is followed by QUIET_MS of stillness.
Gradio's screen-reader announcements (an invisible ".sr-only" live region that it fills and empties on timers, up
to seconds after an event) are not changes a user sees, so they are left out, for both apps alike.

A click whose slow parts are filled after it (the head summary's importance row, an ablation's chart, the Training
tab's film: their features mark those regions "lab-slow", and each says it is computing meanwhile) gets two times:
when it was answered (the last change outside those regions) and when everything was filled. The server requests a
look (Show step, a key, Focus head) sends are counted: none is the bar. The scripts that drive the page are in
browser_page.py; the rows for the Why, Patch, Trust and Beam tree tabs and a candidate's "why not this?" in browser_tabs.py.

The large models are random transformers models (Marian) of real checkpoints' shapes, built once into
LARGE_MODELS (outside the repository): opus-mt-de-en's (6+6 layers, 8 heads, d 512, a 58,101-token vocabulary) and
mBART-large's (12+12 layers, 16 heads, d 1024, a 250,027-token vocabulary; about 2.4 GB).
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
from pathlib import Path

os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")
HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from browser_page import (
    CHOOSE,
    CLICK,
    CLICK_NTH,
    MOVE_SLIDER,
    PRESS,
    WORDS,
    click_ms,
    open_page,
    pick_model,
    set_source,
    settle,
    tile_ms,
)
from browser_table import report
from browser_tabs import (
    measure_beam_tree,
    measure_flow,
    measure_patch,
    measure_trust,
    measure_two_models,
    measure_why,
    measure_why_not,
)
from load import REPO, start_app
from results import put_block
from shaped_models import SHAPES, shaped_marian

CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
]
STEP_TEXT = "Ich habe gestern Abend mit meinem Bruder lange über die Zukunft unserer kleinen Firma gesprochen."
TEN_WORDS = "Die Datei wurde gestern von einem anderen Benutzer geändert und gespeichert."
PARAGRAPH = (  # 60 words
    "Wählen Sie bitte die Zellen aus, die Sie formatieren möchten, und klicken Sie dann auf Format. "
    "Im Dialog können Sie die Schriftart, die Größe und die Farbe des Textes ändern. "
    "Die neuen Einstellungen gelten dann für alle markierten Zellen des aktuellen Tabellenblatts. "
    "Um die Formatierung wieder zu entfernen, wählen Sie die Zellen erneut aus und klicken Sie dann auf Standard."
)
LARGE_MODELS = Path(tempfile.gettempdir()) / "attention-lab-benchmark-models"

FILM_TEXT = "abcdef12"  # the reversal model's Training tab
OTHER_TEN_WORDS = (  # new sources for a Run with the Heads tab open: no summary of them made yet
    "Der Bericht wurde heute von einem neuen Kollegen gelesen und geprüft.",
    "Das Bild wurde damals von einem alten Freund gemalt und verkauft.",
    "Die Tür wurde morgens von einem jungen Mann geöffnet und geschlossen.",
)


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
    measure_looks(app, floor, times, repeats)
    measure_why(app, floor, times, repeats)
    measure_why_not(app, floor, times)
    measure_patch(app, floor, times, repeats)
    set_source(app, TEN_WORDS)
    for _ in range(max(3, repeats // 2)):
        click_ms(app, "Reset")
        times["floor"].append(click_ms(floor, "Step"))
        times["run"].append(click_ms(app, "Run"))
    set_source(app, PARAGRAPH)
    for _ in range(3):
        click_ms(app, "Reset")
        times["paragraph"].append(click_ms(app, "Run"))
    measure_trust(app, floor, times, TEN_WORDS, repeats)
    measure_flow(app, floor, times, TEN_WORDS, repeats)
    measure_two_models(app, floor, times, TEN_WORDS, repeats)
    measure_beam_tree(app, floor, times, TEN_WORDS, repeats)
    measure_head_tests(app, floor, times)
    measure_training(app, floor, times)
    measure_presenter(browser, app_url, floor, times, repeats)
    for _ in range(3):
        fresh = open_page(browser, app_url)
        set_source(fresh, TEN_WORDS)
        times["first_run"].append(click_ms(fresh, "Run"))
        fresh.context.close()
    return times


def measure_presenter(browser, app_url: str, floor, times: dict[str, list[float]], repeats: int) -> None:
    """Presenter mode on a projector's 1280×720: turning it on, then Steps in it."""
    times.update(presenter_on=[], presenter_step=[])
    page = open_page(browser, app_url, width=1280, height=720)
    times["presenter_on"].append(click_ms(page, "Presenter mode"))
    click_ms(page, "Reset")
    set_source(page, STEP_TEXT)
    click_ms(page, "Step")
    for _ in range(max(3, repeats // 2)):
        times["floor"].append(click_ms(floor, "Step"))
        times["presenter_step"].append(click_ms(page, "Step"))
    page.context.close()


def measure_looks(app, floor, times: dict[str, list[float]], repeats: int) -> None:
    """Looking at the decoding the page holds (the 15-word sentence, stepped `repeats` + 1 times): moves of Show step
    and key presses, back and forth, and Focus head choices; and the server requests they sent."""
    times.update(show_step=[], focus=[], focus_menu=[], key=[])
    times.update(show_step_requests=[], focus_requests=[], focus_menu_requests=[], key_requests=[])
    before = len(app.requests)
    for i in range(repeats):
        times["floor"].append(click_ms(floor, "Step"))
        times["show_step"].append(click_ms(app, ["Show step", repeats - i if i % 2 else i], MOVE_SLIDER))
    times["show_step_requests"].append(len(app.requests) - before)
    before = len(app.requests)
    for i in range(repeats):
        times["floor"].append(click_ms(floor, "Step"))
        times["key"].append(click_ms(app, "ArrowLeft" if i % 2 else "ArrowRight", PRESS))
    times["key_requests"].append(len(app.requests) - before)
    before = len(app.requests)
    for layer, head in ((1, 2), (0, 0), (2, 3), (0, 1)) * 2:
        times["floor"].append(click_ms(floor, "Step"))
        times["focus"].append(tile_ms(app, layer, head))
    times["focus_requests"].append(len(app.requests) - before)
    before = len(app.requests)
    for head in ("Layer 2 · Head 3", "Layer 1 · Head 1", "Layer 3 · Head 4", "Mean of all heads") * 2:
        times["floor"].append(click_ms(floor, "Step"))
        times["focus_menu"].append(click_ms(app, ["Focus head", head], CHOOSE))
    times["focus_menu_requests"].append(len(app.requests) - before)


def measure_head_tests(app, floor, times: dict[str, list[float]]) -> None:
    """The head tests on the 10-word sentence: a Run with the Heads tab open (summary and every head ablated in turn),
    after a Reset and with a new sentence each time, Ablate (every cross head of layer 3), and an edit (a click on a
    source word at the shown step)."""
    times.update(heads_run=[], ablate=[], edit=[], heads_run_answered=[], ablate_answered=[], edit_answered=[])
    times.update(heads_run_new=[], heads_run_new_answered=[])
    click_ms(app, "Heads")
    for text in OTHER_TEN_WORDS:
        set_source(app, text)
        times["floor"].append(click_ms(floor, "Step"))
        times["heads_run_new"].append(click_ms(app, "Run", answered=times["heads_run_new_answered"]))
    set_source(app, TEN_WORDS)
    for _ in range(3):
        click_ms(app, "Reset")
        times["floor"].append(click_ms(floor, "Step"))
        times["heads_run"].append(click_ms(app, "Run", answered=times["heads_run_answered"]))
    app.get_by_label("Heads to ablate").click()
    app.get_by_role("option", name="Cross · Layer 3 · all heads", exact=True).click()
    app.keyboard.press("Escape")
    settle(app)
    for _ in range(3):
        times["floor"].append(click_ms(floor, "Step"))
        times["ablate"].append(click_ms(app, "Ablate", answered=times["ablate_answered"]))
    click_ms(app, "Attention")
    for word in (1, 3, 5):
        times["floor"].append(click_ms(floor, "Step"))
        times["edit"].append(click_ms(app, [WORDS, word], CLICK_NTH, answered=times["edit_answered"]))


def measure_training(app, floor, times: dict[str, list[float]]) -> None:
    """The Training tab on the reversal model: opening it (every snapshot decodes the source) and a move of its
    slider to another snapshot (a redraw of the output, the attention and the chart's mark)."""
    times.update(training_open=[], snapshot=[], training_open_answered=[])
    pick_model(app, "reverse")
    for i in range(3):
        set_source(app, FILM_TEXT[: 6 + i])  # a new source each time: nothing decoded yet
        times["floor"].append(click_ms(floor, "Step"))
        times["training_open"].append(click_ms(app, "Training", answered=times["training_open_answered"]))
        click_ms(app, "Beams")
    click_ms(app, "Training")
    for n in (3, 6, 9):
        times["floor"].append(click_ms(floor, "Step"))
        times["snapshot"].append(click_ms(app, ["Snapshot", n], MOVE_SLIDER))


def large_model(name: str) -> Path:
    """The folder of a random transformers model of SHAPES[name], built once (LARGE_MODELS)."""
    shape, vocab = SHAPES[name]
    folder = LARGE_MODELS / name
    if not (folder / "config.json").is_file():
        shaped_marian(folder, shape, vocab, STEP_TEXT)
    return folder


def rapid_step_ms(page) -> float:
    """A Step clicked the moment the one before has answered: no time to decode the next step ahead."""
    held = page.evaluate("() => window.attentionLab.key")
    page.evaluate(CLICK, "Step")
    page.wait_for_function("k => window.attentionLab.key !== k", arg=held, polling=5, timeout=120_000)
    return click_ms(page, "Step")


def measure_large(browser, app_url: str, floor_url: str, repeats: int, times: dict[str, list[float]]) -> None:
    """Step on each large model (its folder is its name in the Model menu), alternated with the floor; and on the
    largest, Steps clicked as soon as the one before answered."""
    floor, app = open_page(browser, floor_url), open_page(browser, app_url)
    click_ms(floor, "Step")
    for name in SHAPES:
        times[f"step_{name}"] = []
        pick_model(app, str(LARGE_MODELS / name))
        set_source(app, STEP_TEXT)
        click_ms(app, "Reset")
        click_ms(app, "Step")  # the first step also encodes
        for _ in range(repeats):
            times["floor"].append(click_ms(floor, "Step"))
            times[f"step_{name}"].append(click_ms(app, "Step"))
    if app.evaluate("() => Boolean(window.attentionLab)"):  # not on an earlier page, which decodes nothing ahead
        times["step_large_rapid"] = []
        for _ in range(max(3, repeats // 2)):
            click_ms(app, "Reset")
            click_ms(app, "Step")
            times["floor"].append(click_ms(floor, "Step"))
            times["step_large_rapid"].append(rapid_step_ms(app))
    floor.context.close()
    app.context.close()


def main(argv: list[str] | None = None) -> int:
    from playwright.sync_api import sync_playwright

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--app", type=Path, default=REPO / "app.py", help="the app to measure")
    parser.add_argument("--repeats", type=int, default=12, help="Steps measured (Runs: half as many)")
    parser.add_argument("--no-large", action="store_true", help="leave out the large transformers models")
    parser.add_argument("--write", action="store_true", help="put the table into benchmarks/RESULTS.md")
    args = parser.parse_args(argv)
    servers = []
    chromium = shutil.which("chromium") or "/usr/bin/chromium"
    try:
        app_server, app_url = start_app(args.app.resolve())
        floor_server, floor_url = start_app(HERE / "floor_app.py")
        servers = [app_server, floor_server]
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=chromium, args=CHROMIUM_ARGS)
            times = measure(browser, app_url, floor_url, args.repeats)
            if not args.no_large:
                folders = [str(large_model(name)) for name in SHAPES]
                app_server.terminate()
                app_server.wait(timeout=30)
                models = [arg for folder in folders for arg in ("--model", folder)]
                servers[0], large_url = start_app(args.app.resolve(), models, timeout_s=600)
                measure_large(browser, large_url, floor_url, args.repeats, times)
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
