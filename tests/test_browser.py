"""A real browser (Debian's Chromium, driven by Playwright) uses the app as a person would."""

import re
import shutil
from pathlib import Path

import pytest

from lab.views import MAX_LABEL

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
]
SCREENSHOTS = Path(__file__).resolve().parent / "screenshots"
pytestmark = pytest.mark.slow  # a real browser against a served app


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
        ".map(p => (p.data || []).filter(t => t.type === 'heatmap').length)"
    )
    assert sum(1 for n in heatmap_traces if n > 0) >= 4 and max(heatmap_traces) >= 4, heatmap_traces
    SCREENSHOTS.mkdir(exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / "app.png"), full_page=True)
    page.close()


MARKUP = [
    "<script>alert(1)</script>",
    "<img src=x onerror=alert(2)>",
    '<a href="https://example.invalid/">link</a>',
    "<b>bold</b>",
    "<svg onload=alert(3)>",
    "%{x}<br>",
]
TEMPLATE_TOKEN = "%{x}<br>"  # plotly fills %{...} in hover templates


@pytest.fixture(scope="module")
def markup_app():
    """An app on a tiny model whose every token is markup, as an untrusted model's vocabulary could be."""
    import torch
    from tokenizers import Tokenizer as HFTokenizer
    from tokenizers import models, pre_tokenizers

    import app
    from lab.registry import Registry
    from tests.conftest import free_port, tiny_config
    from transformer import Transformer, greedy_decode
    from transformer.hub import Seq2SeqPipeline
    from transformer.tokenizer import SPECIAL_TOKENS, Tokenizer

    hf = HFTokenizer(models.WordLevel({t: i for i, t in enumerate(SPECIAL_TOKENS + MARKUP)}, unk_token="<unk>"))
    hf.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    hf.add_special_tokens(SPECIAL_TOKENS)
    tokenizer = Tokenizer(hf)
    source = " ".join(MARKUP)
    for seed in range(500):  # untrained: pick weights whose last output token is the template-like one
        torch.manual_seed(seed)
        cfg = tiny_config(
            src_vocab_size=tokenizer.vocab_size, tgt_vocab_size=tokenizer.vocab_size, max_len=12, share_embeddings=True
        )
        pipeline = Seq2SeqPipeline(Transformer(cfg), tokenizer, name="markup")
        ids = greedy_decode(pipeline.model, torch.tensor([tokenizer.encode(source)]), 64)[0]  # as Run does
        if ids and tokenizer.id_to_token(ids[-1]) == TEMPLATE_TOKEN:
            break
    else:
        raise AssertionError("no seed gives the wanted output")
    demo = app.build_demo(Registry(models={"markup": pipeline}))
    port = free_port()
    demo.launch(server_name="127.0.0.1", server_port=port, prevent_thread_lock=True, quiet=True)
    yield f"http://127.0.0.1:{port}/", pipeline, source
    demo.close()


INJECTED = """() => ({
    images: document.querySelectorAll('img[src="x"]').length,
    links: [...document.querySelectorAll('a')].filter(a => ((a.getAttribute('href') || '') +
        (a.getAttributeNS('http://www.w3.org/1999/xlink', 'href') || '')).includes('example.invalid')).length,
    svgs: [...document.querySelectorAll('svg')].filter(s => s.getAttribute('onload')).length,
    bold: [...document.querySelectorAll('.js-plotly-plot tspan')].filter(s => s.textContent === 'bold').length,
    scripts: [...document.scripts].filter(s => s.textContent.includes('alert(')).length,
})"""
HOVER = """() => {
    const label = document.querySelector('.hoverlayer .hovertext');
    return label ? label.textContent.replace(/\u200b/g, '') : null;
}"""


def hover_text(page, plot) -> str:
    """Move the mouse to the middle of a plot's first heatmap and return the hover label's text."""
    area = plot.locator(".nsewdrag").first
    area.scroll_into_view_if_needed()
    box = area.bounding_box()
    page.mouse.move(box["x"] + box["width"] * 0.5, box["y"] + box["height"] * 0.5)
    page.wait_for_function(f"() => ({HOVER})() !== null", timeout=10_000)
    return page.evaluate(HOVER)


def unescaped_hover_point(page, plot) -> dict:
    """The x and y labels of the hovered point, as the text a reader should see (entities decoded, no zero-widths)."""
    return plot.evaluate("""p => {
        const point = p._hoverdata[0], text = document.createElement('textarea');
        const plain = s => { text.innerHTML = String(s); return text.value.replace(/\u200b/g, ''); };
        return {x: plain(point.x), y: plain(point.y)};
    }""")


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
    assert TEMPLATE_TOKEN in expected
    expect(page.get_by_label("Output")).to_have_value(expected, timeout=30_000)  # the markup, as text
    page.wait_for_function("() => document.querySelectorAll('.js-plotly-plot .xtick').length > 0", timeout=30_000)
    plots = page.locator(".js-plotly-plot")

    labels = page.evaluate(
        "() => [...document.querySelectorAll('.js-plotly-plot .xtick text, "
        ".js-plotly-plot .ytick text')].map(t => t.textContent)"
    )
    for token in MARKUP:  # every source token appears on the axes literally (long ones cut short)
        shown = token if len(token) <= MAX_LABEL else token[: MAX_LABEL - 1] + "…"
        assert any(shown in label for label in labels), (shown, labels[:20])
    assert "<b>bold</b>" in labels and TEMPLATE_TOKEN in labels  # whole tags, not bold text or a line break

    spotlight = hover_text(page, plots.nth(0))  # its hover names the step's output token: TEMPLATE_TOKEN
    assert f"→ {TEMPLATE_TOKEN}source:" in spotlight, spotlight
    titles = page.evaluate("() => [...document.querySelectorAll('.js-plotly-plot .gtitle')].map(t => t.textContent)")
    assert any(f"wrote {TEMPLATE_TOKEN}" in title for title in titles), titles

    grid = plots.nth(2)  # the cross-attention grid: query = output step, key = source token
    text = hover_text(page, grid)
    point = unescaped_hover_point(page, grid)
    assert point["x"] in text and point["y"] in text and "<" in point["x"] + point["y"], (point, text)

    page.get_by_label("Source").fill("<img src=x onerror=alert(4)>")  # not in the vocabulary: named in a notice
    page.get_by_role("button", name="Run", exact=True).click()
    expect(page.get_by_label("Notice")).to_have_value(re.compile(r"less-than sign \(U\+003C\)"), timeout=30_000)

    assert page.evaluate(INJECTED) == {"images": 0, "links": 0, "svgs": 0, "bold": 0, "scripts": 0}
    assert dialogs == []
    assert not [u for u in requests if u.endswith("/x") or "example.invalid" in u]
    SCREENSHOTS.mkdir(exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / "markup.png"), full_page=True)
    page.close()
