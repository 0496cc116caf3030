"""In Chromium: looking at a decoding the page holds is drawn in the page. Scrubbing Show step and choosing a Focus
head send the server nothing, and what is drawn is the /attention export's weights; a 12+12-layer, 16-head
transformers model is drawn the same way."""

from __future__ import annotations

import numpy as np
import pytest

from tests import hf_models
from tests.browser import DRAWN, FOCUSED, TITLE, WAIT_MS, button, fresh, kind, opened, redrawn, run, watch_requests
from tests.conftest import close_app

pytestmark = pytest.mark.slow

SPLIT = "Ich muss den Rasen mähen."


def show_step(page, key: str) -> None:
    """Move Show step by a key (ArrowLeft, ArrowRight, Home, End), as a person scrubbing with the keyboard does."""
    page.get_by_label("Show step").focus()
    page.keyboard.press(key)


def exported(url: str, model: str, text: str) -> dict:
    from gradio_client import Client

    return Client(url, verbose=False).predict(model, text, "greedy", 4, api_name="/attention")


def cross(record: dict, shown: int, layer: int, head: int) -> np.ndarray:
    """The export's cross-attention of one head for the first `shown` steps, (shown, source pieces)."""
    return np.array([step["cross"][layer][head] for step in record["steps"][:shown]])


def test_a_scrub_is_drawn_in_the_page_with_no_request_and_shows_the_exports_weights(served_app, app_page):
    url, page = served_app[0], app_page
    fresh(page)
    run(page, SPLIT)
    page.get_by_label("Merge pieces into words").uncheck()  # a column per source piece, as the export has them
    page.get_by_label("Focus head").select_option("Layer 2 · Head 3")
    page.wait_for_function(f"() => ({TITLE})() === 'Cross-attention: layer 2, head 3'", timeout=WAIT_MS)
    page.settle()
    record = exported(url, "de-en", SPLIT)
    n = len(record["steps"])
    sent = watch_requests(page)
    drawn = page.evaluate(DRAWN)
    assert f"Step {n - 1} wrote" in drawn  # the page opens a Run on its last word, before the end-of-sentence token
    for shown in range(n, -1, -1):
        show_step(page, "End" if shown == n else "ArrowLeft")
        drawn = redrawn(page, drawn)
        weights = page.evaluate(FOCUSED)
        if shown == 0:
            assert weights is None and "nothing written yet" in drawn
            continue
        assert f"Step {shown} wrote" in drawn
        np.testing.assert_allclose(np.array(weights), cross(record, shown, 1, 2), atol=1e-4, err_msg=f"step {shown}")
    assert sent == [], f"a scrub asked the server: {sent}"


def test_a_focus_change_is_drawn_in_the_page_with_the_heads_own_weights(served_app, app_page):
    url, page = served_app[0], app_page
    fresh(page)
    run(page, SPLIT)
    page.get_by_label("Merge pieces into words").uncheck()
    page.settle()
    record = exported(url, "de-en", SPLIT)
    shown = int(page.get_by_label("Show step").input_value())
    sent = watch_requests(page)
    for label, (layer, head) in (("Layer 3 · Head 4", (2, 3)), ("Layer 1 · Head 1", (0, 0))):
        page.get_by_label("Focus head").select_option(label)
        expected = f"Cross-attention: layer {layer + 1}, head {head + 1}"
        page.wait_for_function(f"() => ({TITLE})() === {expected!r}", timeout=WAIT_MS)
        np.testing.assert_allclose(np.array(page.evaluate(FOCUSED)), cross(record, shown, layer, head), atol=1e-4)
    page.get_by_label("Focus head").select_option("Mean of all heads")
    page.wait_for_function(f"() => ({TITLE})() === 'Cross-attention: mean of all heads'", timeout=WAIT_MS)
    mean = np.mean([cross(record, shown, layer, head) for layer in range(3) for head in range(4)], axis=0)
    np.testing.assert_allclose(np.array(page.evaluate(FOCUSED)), mean, atol=1e-4)
    assert sent == [], f"a focus change asked the server: {sent}"


LARGE = {  # mBART-large's and NLLB's layers and heads, at a tiny width
    "encoder_layers": 12,
    "decoder_layers": 12,
    "encoder_attention_heads": 16,
    "decoder_attention_heads": 16,
    "d_model": 64,
    "encoder_ffn_dim": 64,
    "decoder_ffn_dim": 64,
}


@pytest.fixture(scope="module")
def large_app(tmp_path_factory):
    """The app serving a random transformers model of 12+12 layers and 16 heads, as a model without a page copy:
    the tests draw the server's answers, and the app made its copy in the background otherwise (about two minutes of
    a core, the export and each precision's drift, taken from the tests that run meanwhile)."""
    from attention_lab.decoding import from_page
    from attention_lab.models.registry import load_models
    from attention_lab.page_copy import copies
    from tests.conftest import launched

    folder = hf_models.marian(tmp_path_factory.mktemp("large"), shape=LARGE)
    with pytest.MonkeyPatch.context() as patch:
        for module in (copies, from_page):
            patch.setattr(module, "copyable", lambda pipeline: False)
        served = launched(load_models([str(folder)], bundled=folder / "none"))
        url, _, _ = next(served)
        yield url, str(folder)
        close_app(served)


TILES = "() => { const c = document.querySelector('#views .views-grid canvas.tiles'); "
TILES += "return [Number(c.dataset.layers), Number(c.dataset.heads)]; }"


def test_a_12_plus_12_layer_16_head_model_is_stepped_scrubbed_and_focused_in_the_page(large_app, browser):
    url, name = large_app
    page = opened(browser, url, wait_for_output=False)  # this model has no example to run as the page opens
    text = "Wo ist der Bahnhof?"
    button(page, "Reset").click()
    page.get_by_label("Source").fill(text)
    page.settle()
    drawn = page.evaluate(DRAWN)
    for _ in range(3):
        button(page, "Step").click()
        drawn = redrawn(page, drawn)
    assert "Step 3 wrote" in drawn
    assert page.evaluate(TILES) == [12, 16]  # every head of every layer, tiled
    record = exported(url, name, text)
    page.get_by_label("Merge pieces into words").uncheck()
    page.settle()
    sent = watch_requests(page)
    page.get_by_label("Focus head").select_option("Layer 12 · Head 16")
    page.wait_for_function(f"() => ({TITLE})() === 'Cross-attention: layer 12, head 16'", timeout=WAIT_MS)
    np.testing.assert_allclose(np.array(page.evaluate(FOCUSED)), cross(record, 3, 11, 15), atol=1e-4)
    drawn = page.evaluate(DRAWN)
    show_step(page, "ArrowLeft")
    drawn = redrawn(page, drawn)
    np.testing.assert_allclose(np.array(page.evaluate(FOCUSED)), cross(record, 2, 11, 15), atol=1e-4)
    assert sent == [], f"looking asked the server: {sent}"
    kind(page, "encoder")
    page.wait_for_function(f"() => ({TITLE})() === 'Encoder self-attention: layer 12, head 16'", timeout=WAIT_MS)
    focused = np.array(page.evaluate(FOCUSED))
    np.testing.assert_allclose(focused, np.array(record["encoder"][11][15]), atol=1e-4)
    page.close()
