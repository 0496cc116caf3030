"""Every screenshot the docs use, made again from the app and the project's own pages, into docs/screenshots/.

    python benchmarks/screenshots.py                            # all of them
    python benchmarks/screenshots.py --only app-1440 flow-1440  # some (a name with or without .png)
    python benchmarks/screenshots.py --out /tmp/shots           # into another folder

SHOTS is the whole list: each picture's file, screen size, what is decoded and shown, and what is taken (the screen,
the full page or an element). The app is served by this process on the bundled models, as tests/conftest.py serves
it, and each picture of it taken in a newly opened Chromium page (Debian's, driven by Playwright) that decodes on the
server (?road=server), but for the app as a person opens it, which decodes itself. The rest come from the code a user
runs: attention_lab.show's notebook cell, the survey report's pruning curves, the live page (attention-lab export
--live) opened from disk, and the Training tab's film, four snapshots side by side.
"""

from __future__ import annotations

import argparse
import io
import os
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from playwright.sync_api import expect, sync_playwright

os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")
REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

OUT = REPO / "docs" / "screenshots"
CHROMIUM = "/usr/bin/chromium"  # Debian's: playwright cannot download its own here
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update"]
CHROMIUM_ARGS += ["--disable-sync", "--no-first-run", "--disable-quic"]
WAIT_MS, LONG_WAIT_MS = 30_000, 120_000  # an answer; a page loading its runtime, or a live file decoding its example
SHOWN = "() => window.attentionLab ? window.attentionLab.shown : null"  # the step the page shows
LAPTOP, PROJECTOR = {"width": 1440, "height": 900}, {"width": 1280, "height": 720}  # tests/browser.py's screens
NARROW = {"width": 390, "height": 844}
CELL = {"width": 1000, "height": 900}  # a notebook's output column
FILM = {"width": 900, "height": 900}  # the Training tab's figure about as wide as high
REPORT = {"width": 760, "height": 800}  # the survey report, its pruning curves at their own width
FILM_STEPS = (0, 268, 583, 1269)  # docs/findings.md, attention across training
PRODUCT = "Die Beschreibung stimmt mit dem Produkt nicht überein."
SUSPICION = "Ich habe den Verdacht, dass er lügt."
WINDOW = "Bitte schließen Sie das Fenster."
RAIN = "Bitte schließen Sie das Fenster, wenn es draußen regnet."
SUPERMARKET = "Der Supermarkt ist Teil einer Handelskette."
BROTHER = "Ich habe gestern Abend mit meinem Bruder lange über die Zukunft gesprochen."
DOG = "Der kleine Hund schläft heute im Garten."  # docs/notebook.md's example


@dataclass(frozen=True)
class Where:
    """What the pictures are taken with: the browser, the served app's address and a folder for written pages."""

    browser: object
    url: str
    work: Path


@dataclass(frozen=True)
class Shot:
    """One picture: its file, the screen it is taken at and what it shows.

    `opens` makes the page: by default the app, on `model`, with `source` Run if given, `query` added to its address,
    decoding on the server or in the page (`road`), and `tab` opened. Then `then` is done on it and `frame` taken:
    "screen", "page" (the full page), a CSS selector, or a function that writes the picture itself."""

    name: str
    viewport: dict
    model: str = "de-en"
    source: str = ""
    tab: str = ""
    then: Callable | None = None
    frame: str | Callable = "screen"
    query: str = ""
    road: str = "server"
    opens: Callable | None = None


def settle(page, quiet_ms: int = 300, limit_ms: int = 10_000) -> None:
    """Wait (at most `limit_ms`) until the page has had no queue request open for `quiet_ms`: its events answered."""
    quiet = 0
    for _ in range(limit_ms // 50):
        quiet = quiet + 50 if not page.pending else 0
        if quiet >= quiet_ms:
            return
        page.wait_for_timeout(50)


def opened(where: Where, shot: Shot):
    """The app in a new page at the shot's screen size, its first example decoded (as tests/browser.py opens it)."""
    query = "&".join(part for part in (shot.query, "road=server" if shot.road == "server" else "") if part)
    page = where.browser.new_page(viewport=shot.viewport)
    page.pending = []  # the queue requests not answered yet
    page.on("request", lambda r: page.pending.append(r) if "/queue/" in r.url else None)
    for done in ("requestfinished", "requestfailed"):
        page.on(done, lambda r: page.pending.remove(r) if r in page.pending else None)
    page.goto(where.url + (f"?{query}" if query else ""), wait_until="commit")
    page.wait_for_function("() => window.attentionLab !== undefined", timeout=WAIT_MS)
    expect(page.get_by_label("Output")).not_to_have_value("", timeout=WAIT_MS)
    if shot.road == "page":
        page.wait_for_function("() => document.body.dataset.road === 'page'", timeout=LONG_WAIT_MS)
    settle(page)
    return page


def open_tab(page, name: str) -> None:
    page.get_by_role("tab", name=name, exact=True).click()
    settle(page)


def keys_to_step(page, step: int) -> None:
    """Show step `step` with the page's keys, as a person moves it."""
    page.locator("#now .lab-label").click()  # nothing focused that takes keys
    page.keyboard.press("Home")
    for _ in range(step):
        page.keyboard.press("ArrowRight")
    page.wait_for_function(f"() => ({SHOWN})() === {step}", timeout=WAIT_MS)
    settle(page)


def three_steps(page) -> None:
    """Reset, then Step three times, each step drawn."""
    page.get_by_role("button", name="Reset", exact=True).click()
    expect(page.get_by_label("Output")).to_have_value("", timeout=WAIT_MS)
    for n in range(1, 4):
        page.get_by_role("button", name="Step", exact=True).click()
        page.wait_for_function(f"() => ({SHOWN})() === {n}", timeout=WAIT_MS)
        settle(page)


def tab_row_on_top(page) -> None:
    """The tab row and its group captions at the top of the screen, when the page is taller than it."""
    page.locator("#lab-tabs").evaluate("(row) => { row.scrollIntoView({block: 'start'}); window.scrollBy(0, -8); }")


def ablate_cross_layer_1(page) -> None:
    """Ablate cross-attention layer 1 (all heads) and wait for the head summary and what changed at each step."""
    page.get_by_label("Heads to ablate").click()
    page.get_by_role("option", name="Cross · Layer 1 · all heads", exact=True).click()
    page.keyboard.press("Escape")
    page.get_by_role("button", name="Ablate", exact=True).click()
    expect(page.get_by_label("Before the ablation")).not_to_have_value("", timeout=WAIT_MS)
    page.wait_for_function("() => document.querySelectorAll('#heads-effects .bars .point').length", timeout=WAIT_MS)
    unmeasured = "() => !document.querySelector('#tab-heads').innerText.includes('Measuring')"
    page.wait_for_function(unmeasured, timeout=WAIT_MS)
    settle(page)


def occlusion_at_step_2(page) -> None:
    """The Why tab by occlusion at step 2, the DecoderLens drawn under it."""
    page.get_by_role("radio", name="Occlusion", exact=True).check()
    keys_to_step(page, 2)
    expect(page.locator("#why-view .why-heading")).to_contain_text("Step 2 wrote", timeout=WAIT_MS)
    expect(page.locator("#why-view")).to_contain_text("Occlusion:", timeout=WAIT_MS)
    expect(page.locator("#tab-why")).to_contain_text("The DecoderLens", timeout=WAIT_MS)
    settle(page)


def flow_at_step_10(page) -> None:
    """The Flow tab at step 10, its graph scrolled into sight."""
    summary = "() => document.querySelector('#flow-view .flow-summary')?.textContent || ''"
    page.wait_for_function(f"() => ({summary})().startsWith('Step ')", timeout=WAIT_MS)
    keys_to_step(page, 10)
    page.wait_for_function(f"() => ({summary})().startsWith('Step 10 wrote')", timeout=WAIT_MS)
    page.locator("#flow-view .flow-figure").scroll_into_view_if_needed()


def trust_scored(page) -> None:
    """The Trust tab with the output scored, from its scores down: the flags and the first bars in sight."""
    page.wait_for_function("() => document.querySelectorAll('#trust-view .trust-bar').length", timeout=WAIT_MS)
    page.locator("#trust-view .trust-flags").wait_for(timeout=WAIT_MS)
    settle(page)
    page.locator("#trust-view .trust-what").evaluate("(scores) => scores.scrollIntoView({block: 'start'})")


def beside_step_583_at_f(page) -> None:
    """Side B the reversal model's snapshot at step 583, the shown word the third ("f")."""
    summary = "() => document.querySelector('#two-models-view .two-models-summary')?.textContent || ''"
    page.get_by_label("Side B", exact=True).click()
    page.get_by_role("option", name="reverse@step 583", exact=True).click()
    page.wait_for_function(f"() => ({summary})().includes('word')", timeout=WAIT_MS)
    keys_to_step(page, 3)


BEST_NODE = """(step) => {
  const gd = document.querySelector('#beam-tree .js-plotly-plot'), xa = gd._fullLayout.xaxis;
  const ya = gd._fullLayout.yaxis, box = gd.getBoundingClientRect();
  const ring = gd.data.find((t) => t.mode === 'markers' && t.marker.size === 13), i = ring.x.indexOf(step);
  return {x: box.left + xa._offset + xa.l2p(ring.x[i]), y: box.top + ya._offset + ya.l2p(ring.y[i])};
}"""


def best_node_at_step_3(page) -> None:
    """The beam tree drawn, and the best hypothesis's node (ringed orange: BEST_NODE finds where it is on the screen)
    at step 3 clicked: its attention drawn below."""
    tree = "() => document.querySelector('#beam-tree .js-plotly-plot')?.data?.length > 3"
    page.wait_for_function(tree, timeout=WAIT_MS)
    settle(page)
    page.locator("#beam-tree").scroll_into_view_if_needed()
    node = page.evaluate(BEST_NODE, 3)
    page.mouse.click(node["x"], node["y"])
    expect(page.locator("#beam-hypothesis .beam-hypothesis-line")).to_contain_text("at step 3", timeout=WAIT_MS)
    focus = "() => document.querySelector('#beam-hypothesis .views-focus .js-plotly-plot')?.data?.length"
    page.wait_for_function(focus, timeout=WAIT_MS)
    settle(page)


def film_frames(page, path: Path) -> None:
    """The Training tab's film at FILM_STEPS, its cross-attention of layer 2, head 1 taken at each and put side by
    side, each under a line with its step and output."""
    from PIL import Image, ImageDraw, ImageFont

    from transformer.snapshots import list_snapshots

    steps = [snapshot.step for snapshot in list_snapshots(REPO / "checkpoints" / "reverse")]
    open_tab(page, "Attention")
    page.get_by_label("Focus head").select_option("Layer 2 · Head 1")
    open_tab(page, "Training")
    frames, font = [], ImageFont.load_default(size=22)
    for step in FILM_STEPS:
        index = steps.index(step)
        page.get_by_label("Snapshot").fill(str(index))
        info = f"() => document.querySelector('#film .film-info')?.textContent.startsWith('Snapshot {index + 1} of')"
        page.wait_for_function(info, timeout=WAIT_MS)
        page.wait_for_function("() => document.querySelector('#film .film-focus .js-plotly-plot .heatmaplayer')")
        settle(page)
        output = page.locator("#film .film-output").inner_text().removeprefix("Output of this snapshot: ")
        output = output if len(output) <= 12 else output[:12] + "…"
        picture = page.locator("#film .film-focus").screenshot(animations="disabled")
        frames.append((f"step {step:,}: “{output}”", Image.open(io.BytesIO(picture)).convert("RGB")))
    width, height = frames[0][1].size  # each frame the same figure, at the same size
    sheet = Image.new("RGB", (width * len(frames), height + 44), "white")
    for i, (caption, frame) in enumerate(frames):
        ImageDraw.Draw(sheet).text((i * width + 12, 10), caption, fill="#222", font=font)
        sheet.paste(frame, (i * width, 44))
    sheet.save(path, optimize=True)


def app(where: Where, shot: Shot):
    """The app opened at the shot's screen size, its model chosen, its source typed and Run (once the output has
    changed, every answer drawn) and its tab opened."""
    page = opened(where, shot)
    if page.get_by_label("Model").input_value() != shot.model:
        page.get_by_label("Model").click()
        page.get_by_role("option", name=shot.model, exact=True).click()
        expect(page.get_by_label("Model")).to_have_value(shot.model, timeout=WAIT_MS)
        settle(page)
    if shot.source:
        before = page.get_by_label("Output").input_value()
        page.get_by_label("Source").fill(shot.source)
        page.get_by_role("button", name="Run", exact=True).click()
        expect(page.get_by_label("Output")).not_to_have_value(before, timeout=WAIT_MS)
        settle(page)
    if shot.tab:
        open_tab(page, shot.tab)
    return page


def from_disk(where: Where, shot: Shot, html: str | None = None):
    """A page of the shot's own file (`html` written into it first, if given) opened from disk, offline, at its
    screen size."""
    path = where.work / f"{Path(shot.name).stem}.html"
    if html is not None:
        path.write_text(html, encoding="utf-8")
    page = where.browser.new_context(viewport=shot.viewport, offline=True).new_page()
    page.goto(path.as_uri(), wait_until="commit")
    return page


def notebook_cell(where: Where, shot: Shot):
    """attention_lab.show(model, source, strategy="beam") as a notebook's output cell draws it."""
    import attention_lab

    cell = attention_lab.show(shot.model, shot.source, strategy="beam").html()
    html = f"<!doctype html><html><head><meta charset='utf-8'></head><body style='margin:8px'>{cell}</body></html>"
    page = from_disk(where, shot, html)
    drawn = "() => document.querySelectorAll('.attention-lab-cell .heatmaplayer').length"
    page.wait_for_function(drawn, timeout=WAIT_MS)
    return page


def survey_report(where: Where, shot: Shot):
    """The survey report of the model's bundled survey.json (python -m attention_lab.survey writes it)."""
    from attention_lab.survey.report import read_survey, survey_html

    survey = read_survey(REPO / "checkpoints" / shot.model / "survey.json")
    page = from_disk(where, shot, survey_html(survey))
    page.wait_for_function("() => document.querySelector('#pruning .js-plotly-plot .scatterlayer')", timeout=WAIT_MS)
    return page


def live_page(where: Where, shot: Shot):
    """The model's live page (attention-lab export --live MODEL -o FILE.html) opened from disk, its example decoded."""
    from attention_lab.export.live import write

    write(shot.model, where.work / f"{Path(shot.name).stem}.html")
    page = from_disk(where, shot)
    ready = "() => document.body?.dataset.busy === 'false' && !!window.attentionLabLive"
    page.wait_for_function(ready, timeout=LONG_WAIT_MS)
    page.wait_for_function("() => document.querySelector('[data-part=views] .heatmaplayer')", timeout=WAIT_MS)
    return page


SHOTS = (  # name, screen, model, source Run, tab opened, then, frame; and the address's road or a page of another kind
    Shot("app-1440.png", LAPTOP, "de-en", PRODUCT, road="page"),
    Shot("app-1280.png", PROJECTOR, "de-en", SUSPICION, then=three_steps, road="page"),
    Shot("app-390.png", NARROW, "de-en", SUSPICION, frame="page", road="page"),
    Shot("presenter-1280.png", PROJECTOR, "de-en", SUSPICION, query="presenter=1", road="page"),
    Shot("tabs-1440.png", LAPTOP, "de-en", PRODUCT, "Why", road="page"),
    Shot("tabs-1280.png", PROJECTOR, "de-en", PRODUCT, "Why", road="page"),
    Shot("tabs-390.png", NARROW, "de-en", PRODUCT, "Why", tab_row_on_top, road="page"),
    Shot("heads-1440.png", LAPTOP, "reverse", "seeinside7heads", "Heads", ablate_cross_layer_1, "page"),
    Shot("why-1440.png", LAPTOP, "de-en", WINDOW, "Why", occlusion_at_step_2, "page"),
    Shot("flow-1440.png", LAPTOP, "de-en", RAIN, "Flow", flow_at_step_10),
    Shot("trust-1440.png", LAPTOP, "de-en", SUPERMARKET, "Trust", trust_scored),
    Shot("two-models-1440.png", LAPTOP, "reverse", "abcdef12", "Two models", beside_step_583_at_f, "page"),
    Shot("beam-tree-1440.png", LAPTOP, "de-en", BROTHER, "Beam tree", best_node_at_step_3, "#lab-views"),
    Shot("beam-tree-390.png", NARROW, "de-en", BROTHER, "Beam tree", best_node_at_step_3, "#lab-views"),
    Shot("training-frames.png", FILM, "reverse", "abcdef12", frame=film_frames),
    Shot("live-page-1440.png", LAPTOP, "de-en", opens=live_page),
    Shot("live-page-390.png", NARROW, "de-en", opens=live_page),
    Shot("notebook-cell.png", CELL, "de-en", DOG, frame=".attention-lab-cell", opens=notebook_cell),
    Shot("pruning-reverse.png", REPORT, "reverse", frame="#pruning", opens=survey_report),
    Shot("pruning-de-en.png", REPORT, "de-en", frame="#pruning", opens=survey_report),
)


def take(page, shot: Shot, path: Path) -> None:
    """The shot's frame of the page, written to `path`, with no pointer hovering over it."""
    page.mouse.move(0, 0)
    if callable(shot.frame):
        shot.frame(page, path)
    elif shot.frame in ("screen", "page"):
        page.screenshot(path=str(path), full_page=shot.frame == "page", animations="disabled")
    else:
        page.locator(shot.frame).screenshot(path=str(path), animations="disabled")


def chosen(only: list[str] | None) -> tuple[Shot, ...]:
    """The shots named by --only (with or without .png), every one without it; SystemExit in one line for a name
    that is not one."""
    names = [shot.name.removesuffix(".png") for shot in SHOTS]
    wanted = {name.removesuffix(".png") for name in only or ()}
    if unknown := sorted(wanted - set(names)):
        raise SystemExit(f"no shot named {', '.join(unknown)} (the shots: {', '.join(names)})")
    return tuple(shot for shot, name in zip(SHOTS, names, strict=True) if not only or name in wanted)


def make(shots: tuple[Shot, ...], out: Path) -> None:
    """Take `shots` into `out`, printing each file as it is written. The app is served by this process on the bundled
    models (as tests/conftest.py serves it) on a free port, if one of the shots is of it."""
    from attention_lab.app import build_demo, launch_options
    from attention_lab.models.registry import load_models

    out.mkdir(parents=True, exist_ok=True)
    demo = build_demo(load_models([])) if any(shot.opens is None for shot in shots) else None
    if demo is not None:
        demo.launch(server_name="127.0.0.1", prevent_thread_lock=True, quiet=True, **launch_options())
    try:
        with sync_playwright() as p, tempfile.TemporaryDirectory() as work:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            where = Where(browser, demo.local_url if demo else "", Path(work))
            for shot in shots:
                began = time.perf_counter()
                page = (shot.opens or app)(where, shot)
                if shot.then:
                    shot.then(page)
                take(page, shot, out / shot.name)
                page.context.close()
                size = (out / shot.name).stat().st_size
                print(f"{shot.name}: {size:,} bytes, {time.perf_counter() - began:.1f} s", flush=True)
            browser.close()
    finally:
        if demo is not None:
            try:
                demo.close()
            except RuntimeError:  # gradio's close met its event loop mid-change (tests/conftest.py close_app): again
                demo.close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="+", metavar="NAME", help="make only these shots (the file names in SHOTS)")
    parser.add_argument("--out", type=Path, default=OUT, help=f"the folder to write into (default {OUT})")
    args = parser.parse_args(argv)
    shots = chosen(args.only)
    began = time.perf_counter()
    make(shots, args.out)
    print(f"{len(shots)} screenshots in {args.out}, {time.perf_counter() - began:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
