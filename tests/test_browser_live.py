"""The live page in Chromium: the single file opened from disk with the network refused, and the folder served by
`python -m http.server` (which loads the page modules as they are). It opens with the app's first example decoded; a typed sentence, Run, Step, Back, Reset,
the keys and a what-if give the library's tokens; bad input gets the app's one-line messages and loses nothing; no
request leaves the page."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch

from attention_lab.assets.bundles import NAME, PACKAGE, modules
from attention_lab.checks import check_source
from attention_lab.controls import Controls
from attention_lab.export.live import ENTRY, PAGE_MODULES
from attention_lab.export.live import main as export_live
from attention_lab.schema import IN_PAGE
from tests.conftest import free_port
from transformer import DecodingSession, bundled, load_pretrained
from transformer.beams import beam_search

pytestmark = pytest.mark.slow  # a real browser, and an export of each model
REPO = Path(__file__).resolve().parent.parent
SENTENCE = "Ich habe den Verdacht, dass er lügt."


def tokens_of(pipeline, text: str, force: tuple[int, int] | None = None) -> list[int]:
    """The app's greedy decoding of `text`, its controls as they open (its length limit: the page's too)."""
    session = DecodingSession(pipeline.model, check_source(pipeline, text)[0], max_new_tokens=Controls.max_len)
    if force:
        step, token = force
        for _ in range(step - 1):
            session.step()
        session.step(force=token)
    return session.run()


def settled(page) -> None:
    page.wait_for_function("document.body.dataset.busy === 'false' && !!window.attentionLabLive", timeout=120_000)
    page.evaluate("window.attentionLabLive.queue")  # every click taken


def live_tokens(page) -> list[int]:
    settled(page)
    return page.evaluate("window.attentionLabLive.session ? window.attentionLabLive.session.tokens : []")  # Reset: none


@pytest.fixture(scope="module")
def live_file(tmp_path_factory):
    out = tmp_path_factory.mktemp("live") / "de-en.html"
    assert export_live(["--live", "de-en", "-o", str(out)]) == 0
    return out


def opened(browser, url: str, width: int = 1280):
    context = browser.new_context(viewport={"width": width, "height": 800}, offline=True)
    page = context.new_page()
    requests, errors = [], []
    page.on("request", lambda r: requests.append(r.url))
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.goto(url)
    settled(page)
    return context, page, requests, errors


def test_the_file_decodes_from_disk_with_no_network(browser, live_file):
    pipeline = load_pretrained(bundled("de-en"))
    assert live_file.stat().st_size <= 50e6
    context, page, requests, errors = opened(browser, live_file.as_uri())
    try:
        example = page.input_value("#lab-source")
        assert example and live_tokens(page) == tokens_of(pipeline, example)  # opens as the app does
        assert page.input_value("#lab-output") == pipeline.tokenizer.decode(tokens_of(pipeline, example))
        assert page.locator(".views-focus .js-plotly-plot").count() == 1  # the focused head, drawn
        assert page.locator(".views-grid canvas.tiles").count() == 1  # and every head

        page.fill("#lab-source", SENTENCE)
        page.click("#lab-run")
        expected = tokens_of(pipeline, SENTENCE)
        assert live_tokens(page) == expected
        assert page.evaluate("attentionLab.shown") == len(expected) - 1  # as the app: the last word, not the end token

        page.click("#lab-back")
        assert live_tokens(page) == expected[:-1]
        page.click("#lab-step")
        assert live_tokens(page) == expected
        page.click("#lab-reset")
        assert live_tokens(page) == [] and page.input_value("#lab-output") == ""

        page.click("h1")  # the keys, with no text box focused: → decodes a step at the last one, ← Home End move
        for _ in range(3):
            page.keyboard.press("ArrowRight")
            settled(page)
        assert live_tokens(page) == expected[:3]
        page.keyboard.press("ArrowLeft")
        assert page.evaluate("attentionLab.shown") == 2
        page.keyboard.press("Home")
        assert page.evaluate("attentionLab.shown") == 0
        page.keyboard.press("End")
        assert page.evaluate("attentionLab.shown") == 3

        page.click("#lab-run")  # what if, at step 2, the second candidate had been written?
        settled(page)
        page.keyboard.press("Home")
        page.keyboard.press("ArrowRight")
        page.keyboard.press("ArrowRight")
        other = page.locator(".candidate:not(.taken)").first
        token = int(other.get_attribute("data-token"))
        other.click()
        assert live_tokens(page) == tokens_of(pipeline, SENTENCE, force=(2, token))
        assert page.locator(".token.forced").count() == 1

        # bad input: the app's one-line messages, and nothing typed or decoded is lost
        page.fill("#lab-source", "   ")
        page.click("#lab-run")
        settled(page)
        assert page.text_content("#live-message") == "Type a source text first: it is empty."
        assert page.input_value("#lab-source") == "   " and page.evaluate("attentionLab.decoding.steps.length") > 0
        long = "Haus " * 200
        page.fill("#lab-source", long)
        page.click("#lab-run")
        settled(page)
        notice = check_source(pipeline, long)[1]
        assert notice.startswith("The source was") and page.text_content("#live-message").startswith(
            notice
        )  # as the app
        assert live_tokens(page) == tokens_of(pipeline, long)
        assert not errors, errors
        assert all(url.startswith(("file:", "blob:")) for url in requests), requests
    finally:
        context.close()


def drawn(page, tab: str, side_b: str | None = None) -> str:
    """Open `tab` and wait until the page has made its message (decoding/explaining.mjs measures each) and its panel
    shows what DRAWN says it shows once drawn, twice half a second apart: its text. (A panel hidden while the decoding
    changed shows what it drew before, another model's or decoding's, until it is made again; and it may say "Open
    this tab after a Run." for a moment while it is.)"""
    made = f"performance.getEntriesByName('road:explain:{tab}').length"
    before = page.evaluate(made)
    page.click(f"#lab-tabs button[data-tab-id={tab}]")
    if side_b is not None:  # Two models: its side B, one of the page's models
        page.select_option("#two-models-second select", side_b)
    page.wait_for_function(f"{made} > {before}", timeout=120_000)
    panel, seen, text = page.locator(f"[data-panel={tab}]"), 0, ""
    for _ in range(240):
        text = panel.inner_text()
        seen = seen + 1 if DRAWN[tab].search(text) else 0
        if seen == 2:
            return text
        page.wait_for_timeout(500 if seen else 250)
    raise AssertionError(f"{tab} never drawn: {text[:300]}")


def listed(page) -> list[str]:
    """The tabs the page shows for the model chosen, besides Attention."""
    return page.locator("#lab-tabs button:not([hidden])").evaluate_all("bs => bs.map((b) => b.dataset.tabId)")[1:]


def test_the_folder_of_two_models_is_a_static_space_served_by_http_server(browser, tmp_path, capsys):
    """`export --live reverse de-en -o DIR/`: a static Space whose Model menu holds both, each model's copy in a
    folder of its name and loaded when first chosen, every tab each lists drawn, served by http.server (which loads
    the page modules as they are). Too big for one file, it is refused in one line that says to write a folder."""
    folder = tmp_path / "space"
    assert export_live(["--live", "reverse", "de-en", "-o", str(folder)]) == 0
    readme = (folder / "README.md").read_text(encoding="utf-8")
    assert "sdk: static" in readme and "export --live reverse de-en" in readme
    assert (folder / "reverse" / "encoder.onnx").is_file() and (folder / "de-en" / "encoder.onnx").is_file()
    assert (folder / "ort-wasm-simd-threaded.wasm").is_file() and not (
        folder / "reverse" / "tokenizers.min.mjs"
    ).exists()
    capsys.readouterr()
    assert export_live(["--live", "reverse", "de-en", "-o", str(tmp_path / "both.html")]) == 2
    refused = capsys.readouterr().err.strip()
    assert "\n" not in refused and re.search(r"over the 50 MB a one-file page carries: write a folder", refused)
    assert not (tmp_path / "both.html").exists()
    port = free_port()
    server = subprocess.Popen(
        [sys.executable, "-m", "http.server", str(port), "--bind", "127.0.0.1", "--directory", str(folder)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_for(port)
        context = browser.new_context(viewport={"width": 390, "height": 800})
        page = context.new_page()
        requests, errors = [], []
        page.on("request", lambda r: requests.append(r.url))
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
        page.goto(f"http://127.0.0.1:{port}/")
        reverse, de_en = load_pretrained(bundled("reverse")), load_pretrained(bundled("de-en"))
        assert page.locator("#lab-model option").all_inner_texts() == ["reverse", "de-en"]
        assert live_tokens(page) == tokens_of(reverse, page.input_value("#lab-source"))
        served = {url.split(f":{port}/", 1)[1] for url in requests}
        # the page modules as they are, by relative path, not a bundle (the one file's); de-en's copy not yet
        assert {f"{PAGE_MODULES}/{path.relative_to(PACKAGE).as_posix()}" for path in modules(ENTRY)} <= served, served
        assert "reverse/encoder.onnx" in served and not any(url.startswith("de-en/") for url in served), served
        assert f"var {NAME}=" not in (folder / "index.html").read_text(encoding="utf-8").replace(" ", "")
        page.fill("#lab-source", "Hello")  # an upper-case letter: the reversal model's own message
        page.click("#lab-run")
        settled(page)
        assert page.text_content("#live-message") == (
            "This model only knows lowercase letters and digits; remove 'H' (latin capital letter h)."
        )
        page.fill("#lab-source", "hello42world")
        page.click("#lab-run")
        assert live_tokens(page) == tokens_of(reverse, "hello42world")
        assert page.evaluate("document.documentElement.scrollWidth") <= 390  # nothing scrolls sideways on a phone
        declared = json.loads(IN_PAGE.read_text(encoding="utf-8"))["tabs"]
        assert listed(page) == declared  # its copy carries the training snapshots and the survey
        page.select_option("#lab-strategy", "beam")  # the Beams tab lists a beam search's live beams
        page.click("#lab-run")
        settled(page)  # a tab opened meanwhile would show the greedy decoding's message, then the beam search's
        for tab in listed(page):
            text = drawn(page, tab, "de-en" if tab == "two_models" else None)  # de-en reads "hello42world" too
            if tab == "training":
                panel = page.locator("[data-panel=training]")
                panel.locator("#snapshot").evaluate("(r) => { r.value = 9; r.dispatchEvent(new Event('input')); }")
                assert "Output of this snapshot: dlrow24olleh" in panel.inner_text(), text  # the model, reversing

        page.select_option("#lab-strategy", "greedy")
        page.click("#lab-tabs button[data-tab-id=training]")
        page.select_option("#lab-model", "de-en")  # Training open: the tab it lacks gives way to Attention
        page.wait_for_function("window.attentionLabLive.model.config.name === 'de-en'", timeout=120_000)
        assert page.input_value("#lab-source") and live_tokens(page) == tokens_of(
            de_en, page.input_value("#lab-source")
        )
        assert page.locator("#lab-tabs button[aria-selected=true]").get_attribute("data-tab-id") == "attention"
        assert listed(page) == [tab for tab in declared if tab != "training"]  # de-en ships no training snapshots
        assert "model=de-en" in page.url  # the link names the model shown
        page.fill("#lab-source", SENTENCE)
        page.click("#lab-run")
        assert live_tokens(page) == tokens_of(de_en, SENTENCE)
        page.select_option("#lab-strategy", "beam")
        page.click("#lab-run")
        settled(page)  # a tab opened meanwhile would show the greedy decoding's message, then the beam search's
        for tab in listed(page):
            drawn(page, tab, "de-en" if tab == "two_models" else None)  # the same model twice
        page.select_option("#lab-strategy", "greedy")
        page.select_option("#lab-model", "reverse")  # loaded once: chosen again, it decodes its example at once
        page.wait_for_function("window.attentionLabLive.model.config.name === 'reverse'", timeout=120_000)
        assert live_tokens(page) == tokens_of(reverse, page.input_value("#lab-source"))
        assert sum(url.endswith("/reverse/encoder.onnx") for url in requests) == 1
        assert not errors, errors
        here = f"http://127.0.0.1:{port}/"  # the folder's files, and code the page made itself (a worker's, blob:)
        assert all(url.startswith((here, f"blob:{here}")) for url in requests), requests
        context.close()
    finally:
        server.terminate()
        server.wait(timeout=10)


def wait_for(port: int) -> None:
    import socket

    for _ in range(100):
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return
        except OSError:
            time.sleep(0.1)
    raise TimeoutError(f"http.server did not answer on port {port}")


# what each tab the page explains shows once it has drawn the decoding (the last step shown, the output scored)
DRAWN = {
    "beams": re.compile(r"step\s+rank\s+hypothesis\s+log-prob\s+1\s+1\s"),  # after a beam search's Run
    "beam_tree": re.compile(r"Beam size 4: \d+ nodes, \d+ pruned\. Best hypothesis"),
    "flow": re.compile(r"Step \d+ wrote “"),
    "trust": re.compile("The model's translation, scored"),
    "why": re.compile(r"Step \d+ wrote .*Why\?[\s\S]*The DecoderLens"),
    "patch": re.compile("The corrupted source is the clean one"),
    "heads": re.compile("KL when ablated"),
    "survey": re.compile(r"Every head over \d+ sentences"),
    "training": re.compile(r"Snapshot 1 of 10: Step 0 · validation loss [\d.]+[\s\S]*Output of this snapshot"),
    "two_models": re.compile(r"A · \S+[\s\S]*B · de-en"),  # side B chosen: both sides' words and heads
}


def test_the_file_draws_each_tab_the_page_explains_from_disk_with_no_network(browser, live_file):
    declared = json.loads(IN_PAGE.read_text(encoding="utf-8"))["tabs"]
    assert set(declared) == set(DRAWN)
    context, page, requests, errors = opened(browser, live_file.as_uri())
    try:
        tabs = page.locator("#lab-tabs button").evaluate_all("buttons => buttons.map((b) => b.dataset.tabId)")[1:]
        assert tabs == [tab for tab in declared if tab not in ("training", "two_models")]  # one model, no snapshots
        page.select_option("#lab-strategy", "beam")  # the Beams tab lists a beam search's live beams
        page.click("#lab-run")
        for tab in tabs:
            drawn(page, tab)
        assert not errors, errors
        assert all(url.startswith(("file:", "blob:")) for url in requests), requests
    finally:
        context.close()


def test_a_beam_tree_node_clicked_in_the_file_is_drawn_decoded_on_from_and_undone_by_back(browser, live_file):
    """In the file from disk, with no network: decoding on before any node is clicked says to click one first, in
    the server's words; a click on a pruned node of the Beam tree draws its hypothesis's attention at its step;
    "Decode on from here, greedily" makes the library's greedy decoding from that node's path the page's decoding,
    and Back restores the one before (beam_tree/in_page.mjs, as in the app)."""
    from tests.test_browser_beam_tree import TREE, visible_node

    pipeline = load_pretrained(bundled("de-en"))
    context, page, requests, errors = opened(browser, live_file.as_uri(), width=1440)
    try:
        page.fill("#lab-source", SENTENCE)
        page.click("#lab-run")
        greedy = live_tokens(page)
        page.click("#lab-tabs button[data-tab-id=beam_tree]")
        page.wait_for_function(f"() => {{ const gd = ({TREE})(); return gd && gd.data.length > 3; }}", timeout=60_000)
        # searched to the app's length limit as its controls open (64), not the model's own (128): 22 steps, not 39
        deepest = f"() => Math.max(...({TREE})().data.filter((t) => t.customdata).flatMap((t) => t.x))"
        src = torch.tensor([check_source(pipeline, SENTENCE)[0]])
        tree = beam_search(pipeline.model, src, Controls.beam_size, Controls.max_len, record_tree=True)[0].tree
        assert page.evaluate(deepest) == max(node.step for node in tree.nodes)
        page.locator("#beam-tree-greedy").scroll_into_view_if_needed()
        page.click("#beam-tree-greedy")  # no node clicked yet: said as the app's server says it
        page.wait_for_function("document.getElementById('live-message').textContent.startsWith('Click a node')")
        assert live_tokens(page) == greedy
        node = visible_node(page, "pruned", 3)
        page.mouse.click(node["x"], node["y"])
        page.wait_for_function("/at step 3/.test(document.querySelector('.beam-hypothesis-line')?.textContent)")
        page.wait_for_function("!!document.querySelector('.beam-hypothesis-views .js-plotly-plot')")
        assert live_tokens(page) == greedy  # the click shows the node; the decoding stays
        tokens = "JSON.stringify(window.attentionLabLive.session.tokens)"
        held = f"{tokens} === {json.dumps(greedy, separators=(',', ':'))!r}"
        page.click("#beam-tree-greedy")
        page.wait_for_function(f"!({held})")
        branched = live_tokens(page)
        session = DecodingSession(pipeline.model, check_source(pipeline, SENTENCE)[0], max_new_tokens=Controls.max_len)
        for token in branched[:3]:
            session.step(force=token)
        assert branched[:3] != greedy[:3] and branched == session.run()  # the node's path, then greedy
        page.click("#lab-back")
        page.wait_for_function(held)
        assert not errors, errors
        assert all(url.startswith(("file:", "blob:")) for url in requests), requests
    finally:
        context.close()
