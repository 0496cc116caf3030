"""A real browser (Debian's Chromium, driven by Playwright) uses the app as a person would."""

import re
import shutil
from pathlib import Path

import pytest

from transformer.viz import MAX_LABEL

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
        "--disable-sync", "--no-first-run", "--disable-quic"]
SCREENSHOTS = Path(__file__).resolve().parent / "screenshots"


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield browser
        browser.close()


def test_step_run_and_the_three_heatmap_sections(served_app, browser):
    from playwright.sync_api import expect

    url, registry, _ = served_app
    text = "Ich habe heute keine Zeit."
    expected = registry.models["de-en"].generate([text], max_new_tokens=64)[0]  # 64: the app's default max length
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    page.goto(url)
    source, output = page.get_by_label("Source"), page.get_by_label("Output")
    source.fill(text)
    page.get_by_role("button", name="Step", exact=True).click()
    expect(output).not_to_have_value("", timeout=30_000)
    first = output.input_value()
    assert expected.startswith(first)
    page.get_by_role("button", name="Run", exact=True).click()
    expect(output).to_have_value(expected, timeout=30_000)
    for heading in ("Encoder self-attention", "Decoder self-attention", "Cross-attention"):
        expect(page.get_by_role("heading", name=heading, exact=True)).to_be_visible()
    # every plot has drawn: spotlight, top-k, and the three grids of heatmaps
    page.wait_for_function("() => document.querySelectorAll('.js-plotly-plot').length >= 5", timeout=30_000)
    heatmap_traces = page.evaluate(
        "() => [...document.querySelectorAll('.js-plotly-plot')]"
        ".map(p => (p.data || []).filter(t => t.type === 'heatmap').length)")
    assert sum(1 for n in heatmap_traces if n > 0) >= 4 and max(heatmap_traces) >= 4, heatmap_traces
    SCREENSHOTS.mkdir(exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / "app.png"), full_page=True)
    page.close()


MARKUP = ["<script>alert(1)</script>", "<img src=x onerror=alert(2)>", '<a href="https://example.invalid/">link</a>',
          "<b>bold</b>", "<svg onload=alert(3)>", "%{x}<br>"]


@pytest.fixture(scope="module")
def markup_app():
    """An app on a tiny model whose every token is markup, as an untrusted model's vocabulary could be."""
    import torch
    from tokenizers import Tokenizer as HFTokenizer
    from tokenizers import models, pre_tokenizers

    import app
    from transformer import Transformer
    from transformer.hub import Seq2SeqPipeline
    from transformer.tokenizer import SPECIAL_TOKENS, Tokenizer

    from tests.conftest import free_port, tiny_config

    hf = HFTokenizer(models.WordLevel({t: i for i, t in enumerate(SPECIAL_TOKENS + MARKUP)}, unk_token="<unk>"))
    hf.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    hf.add_special_tokens(SPECIAL_TOKENS)
    tokenizer = Tokenizer(hf)
    source = " ".join(MARKUP)
    for seed in range(50):  # untrained: pick weights whose output is not empty
        torch.manual_seed(seed)
        cfg = tiny_config(src_vocab_size=tokenizer.vocab_size, tgt_vocab_size=tokenizer.vocab_size, max_len=12,
                          share_embeddings=True)
        pipeline = Seq2SeqPipeline(Transformer(cfg), tokenizer, name="markup")
        if pipeline.generate([source], max_new_tokens=6)[0]:
            break
    demo = app.build_demo(app.Registry(models={"markup": pipeline}))
    port = free_port()
    demo.launch(server_name="127.0.0.1", server_port=port, prevent_thread_lock=True, quiet=True)
    yield f"http://127.0.0.1:{port}/", pipeline, source
    demo.close()


INJECTED = """() => ({
    images: document.querySelectorAll('img[src="x"]').length,
    links: document.querySelectorAll('a[href*="example.invalid"]').length,
    svgs: [...document.querySelectorAll('svg')].filter(s => s.getAttribute('onload')).length,
    bold: [...document.querySelectorAll('.js-plotly-plot b')].filter(b => b.textContent === 'bold').length,
    scripts: [...document.scripts].filter(s => s.textContent.includes('alert(')).length,
})"""


def test_markup_in_tokens_is_shown_as_text_and_never_runs(markup_app, browser):
    from playwright.sync_api import expect

    url, pipeline, source = markup_app
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    dialogs, requests = [], []
    page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
    page.on("request", lambda request: requests.append(request.url))
    page.goto(url)
    page.get_by_label("Source").fill(source)
    page.get_by_role("button", name="Run", exact=True).click()
    expected = pipeline.generate([source], max_new_tokens=64)[0]
    assert any(token in expected for token in MARKUP)
    expect(page.get_by_label("Output")).to_have_value(expected, timeout=30_000)  # the markup, as text
    page.wait_for_function("() => document.querySelectorAll('.js-plotly-plot .xtick').length > 0", timeout=30_000)

    labels = page.evaluate("() => [...document.querySelectorAll('.js-plotly-plot .xtick text, "
                           ".js-plotly-plot .ytick text')].map(t => t.textContent)")
    for token in MARKUP:  # every source token appears on the axes literally (long ones cut short)
        shown = token if len(token) <= MAX_LABEL else token[: MAX_LABEL - 1] + "…"
        assert any(shown in label for label in labels), (shown, labels[:20])
    assert "<b>bold</b>" in labels and "%{x}<br>" in labels  # whole tags, not bold text or a line break

    grid = page.locator(".js-plotly-plot").nth(2).locator(".nsewdrag").first  # after spotlight and top-k
    grid.scroll_into_view_if_needed()
    box = grid.bounding_box()
    page.mouse.move(box["x"] + box["width"] * 0.5, box["y"] + box["height"] * 0.5)
    page.wait_for_selector(".hoverlayer .hovertext", timeout=10_000)
    hover = page.locator(".hoverlayer .hovertext").first.text_content()
    assert any(token[: MAX_LABEL - 1] in hover for token in MARKUP + ["</s>"]), hover

    page.get_by_label("Source").fill("<img src=x onerror=alert(4)>")  # not in the vocabulary: named in a notice
    page.get_by_role("button", name="Run", exact=True).click()
    expect(page.get_by_label("Notice")).to_have_value(re.compile(r"less-than sign \(U\+003C\)"), timeout=30_000)
    page.get_by_role("button", name="Back", exact=True).click()
    page.get_by_role("button", name="Back", exact=True).click()  # more than there is: an error toast

    assert page.evaluate(INJECTED) == dict(images=0, links=0, svgs=0, bold=0, scripts=0)
    assert dialogs == []
    assert not [u for u in requests if u.endswith("/x") or "example.invalid" in u]
    SCREENSHOTS.mkdir(exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / "markup.png"), full_page=True)
    page.close()
