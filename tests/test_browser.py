"""A real browser (Debian's Chromium, driven by Playwright) uses the app as a person would."""

import json
import re
from pathlib import Path

import pytest

from attention_lab.models.examples import first_example

SCREENSHOTS = Path(__file__).resolve().parent / "screenshots"  # git-ignored: for a person to look at
WAIT_MS = 30_000
WIDE, NARROW = {"width": 1400, "height": 1000}, {"width": 390, "height": 844}
SPLIT = "Ich muss den Rasen mähen."  # "Rasen" and "mähen" are split into pieces
SPLIT_WORDS = ["Ich", "muss", "den", "Rasen", "mähen", ".", "&lt;/s&gt;"]  # as plotly gets them: escaped
PARAGRAPH = (
    "Gestern Abend bin ich mit meinen Freunden in die Stadt gefahren, weil wir ins Kino gehen wollten. Der Film war "
    "lang, aber sehr spannend, und danach haben wir in einem kleinen Restaurant am Markt gegessen. Das Essen war gut "
    "und nicht teuer. Später sind wir dann zu Fuß nach Hause gegangen, obwohl es schon dunkel war und ein wenig "
    "regnete."
)
FIGURE = "() => [...document.querySelectorAll('.attention-view .js-plotly-plot')].find(p => p.offsetParent !== null)"
TRACES = f"() => {{ const gd = ({FIGURE})(); return gd ? JSON.stringify(gd.data) : null; }}"
FOCUS_X = f"() => {{ const gd = ({FIGURE})(); return gd && gd.data.length > 1 ? gd.data[1].x : null; }}"
CANDIDATES = ".candidates .candidate"  # the next-token candidates, a button each
MAX_LABEL = "() => window.AttentionViews.MAX_LABEL"  # characters of a token shown on an axis
MAX_ROWS_SHOWN = "() => window.AttentionViews.MAX_ROWS_SHOWN"  # rows a focus view shows before it pans
pytestmark = pytest.mark.slow  # a real browser against a served app


def settle(page, pending: list, quiet_ms: int = 300, limit_ms: int = 10_000) -> None:
    """Wait (at most `limit_ms`) until the page has had no queue request open for `quiet_ms`: its events answered.

    Only a pause: Gradio's answer stream now and then stays open for long, and every test checks what it needs."""
    quiet = 0
    for _ in range(limit_ms // 50):
        quiet = quiet + 50 if not pending else 0
        if quiet >= quiet_ms:
            return
        page.wait_for_timeout(50)


def opened(browser, url: str, viewport: dict = WIDE):
    """A new page on the app, once the events it sends on opening (its first example's run) have been answered."""
    from playwright.sync_api import expect

    page = browser.new_page(viewport=viewport)
    pending = []
    page.on("request", lambda r: pending.append(r) if "/queue/" in r.url else None)
    for done in ("requestfinished", "requestfailed"):
        page.on(done, lambda r: pending.remove(r) if r in pending else None)
    page.settle = lambda: settle(page, pending)
    page.goto(url)
    expect(page.get_by_label("Output")).not_to_have_value("", timeout=WAIT_MS)
    page.settle()
    return page


def button(page, name: str):
    return page.get_by_role("button", name=name, exact=True)


def shot(page, name: str) -> None:
    SCREENSHOTS.mkdir(exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / f"{name}.png"), full_page=True)


def run(page, text: str) -> None:
    """Type `text` as the Source and Run it; wait until the output changed and every answer has been drawn."""
    from playwright.sync_api import expect

    output = page.get_by_label("Output")
    before = output.input_value()
    page.get_by_label("Source").fill(text)
    button(page, "Run").click()
    expect(output).not_to_have_value(before, timeout=WAIT_MS)
    page.settle()


def pick_model(page, name: str) -> None:
    from playwright.sync_api import expect

    page.get_by_label("Model").click()
    page.get_by_role("option", name=name, exact=True).click()
    expect(page.get_by_label("Model")).to_have_value(name, timeout=WAIT_MS)
    page.settle()


def open_tab(page, name: str) -> None:
    """Open a tab; on a narrow screen the tabs that do not fit are behind a "More tabs" menu."""
    tab = page.get_by_role("tab", name=name, exact=True)
    if not tab.is_visible():
        page.get_by_role("button", name="More tabs").click()
        tab = page.get_by_role("button", name=name, exact=True).filter(visible=True).last
    tab.click()


def focus_x_is(page, labels: list[str]) -> None:
    """Wait until the open tab's focused head has exactly these column labels."""
    wanted = json.dumps(labels, ensure_ascii=False, separators=(",", ":"))  # as JSON.stringify writes it
    page.wait_for_function(f"() => JSON.stringify(({FOCUS_X})()) === {json.dumps(wanted)}", timeout=WAIT_MS)


def shown_labels(page) -> str:
    """Every label a reader sees: the figure's traces and drawn text, the now-view, the top-k candidates."""
    figure = page.evaluate(
        f"() => {{ const gd = ({FIGURE})(); return JSON.stringify([gd.data.map(t => [t.x, t.y]),"
        " [...gd.querySelectorAll('text')].map(t => t.textContent)]); }"
    )
    candidates = page.locator(CANDIDATES).all_inner_texts()
    return "\n".join([figure, page.locator(".now-view").inner_text(), *candidates])


def test_the_page_opens_on_the_last_step_of_its_first_example(served_app, browser):
    """On load the page runs its first example; every view must show that run's last word (not step 0)."""
    from playwright.sync_api import expect

    url, registry, _ = served_app
    text = first_example(registry, "de-en")
    expected = registry.entry("de-en").pipeline.generate([text], max_new_tokens=64)[0]
    pages = [opened(browser, url) for _ in range(4)]  # the page's own opening events race: give them chances
    for page in pages:
        expect(page.get_by_label("Output")).to_have_value(expected, timeout=WAIT_MS)
        expect(page.locator(".now-view")).to_contain_text(re.compile(r"Step [1-9]\d* wrote"), timeout=WAIT_MS)
        assert page.evaluate(f"() => ({FIGURE})()?.data.length") == 2, "no cross-attention figure"
    shot(pages[0], "load")
    for page in pages:
        page.close()


def test_step_writes_the_first_word_and_run_the_whole_output_in_words(served_app, browser):
    from playwright.sync_api import expect

    url, registry, _ = served_app
    pipeline = registry.entry("de-en").pipeline
    assert len(pipeline.tokenizer.encode(SPLIT)) > len(SPLIT_WORDS)  # words made of several pieces
    expected = pipeline.generate([SPLIT], max_new_tokens=64)[0]  # 64: the page's default Max length
    page = opened(browser, url)
    output = page.get_by_label("Output")
    page.get_by_label("Source").fill(SPLIT)
    button(page, "Step").click()
    expect(output).to_have_value(expected.split()[0], timeout=WAIT_MS)
    expect(page.locator(".now-view")).to_contain_text("Step 1 wrote", timeout=WAIT_MS)
    button(page, "Run").click()
    expect(output).to_have_value(expected, timeout=WAIT_MS)
    focus_x_is(page, SPLIT_WORDS)
    kinds = page.evaluate(f"() => ({FIGURE})().data.map(t => [t.type, t.x === undefined, t.y === undefined])")
    assert kinds == [["heatmap", True, True], ["heatmap", False, False]], kinds  # all heads tiled, then the focus
    assert "▁" not in shown_labels(page)
    page.close()


def test_an_error_is_a_warning_and_keeps_every_view(served_app, browser):
    from playwright.sync_api import expect

    page = opened(browser, served_app[0])
    run(page, SPLIT)
    output = page.get_by_label("Output")
    before = (output.input_value(), page.evaluate(TRACES), page.locator(".now-view").inner_html())
    assert before[0] and json.loads(before[1])
    page.get_by_label("Source").fill("")
    button(page, "Run").click()
    expect(page.locator("[data-testid='toast-body'].warning")).to_contain_text("empty", timeout=WAIT_MS)
    page.settle()
    after = (output.input_value(), page.evaluate(TRACES), page.locator(".now-view").inner_html())
    assert after == before
    page.close()


def test_back_is_off_at_step_0_and_on_after_a_step(served_app, browser):
    from playwright.sync_api import expect

    page = opened(browser, served_app[0])
    button(page, "Reset").click()
    expect(page.get_by_label("Output")).to_have_value("", timeout=WAIT_MS)
    expect(button(page, "Back")).to_be_disabled(timeout=WAIT_MS)
    button(page, "Step").click()
    expect(page.get_by_label("Output")).not_to_have_value("", timeout=WAIT_MS)
    expect(button(page, "Back")).to_be_enabled(timeout=WAIT_MS)
    page.close()


def test_step_is_off_once_decoding_finished(served_app, browser):
    from playwright.sync_api import expect

    page = opened(browser, served_app[0])
    run(page, SPLIT)
    expect(page.get_by_label("Notice")).to_have_value(re.compile("Finished"), timeout=WAIT_MS)
    expect(button(page, "Step")).to_be_disabled(timeout=WAIT_MS)
    page.close()


def test_switching_the_model_swaps_in_an_example_it_can_read(served_app, browser):
    from playwright.sync_api import expect

    page = opened(browser, served_app[0])
    pick_model(page, "reverse")
    source = page.get_by_label("Source")
    expect(source).to_have_value(re.compile(r"^[a-z0-9]+$"), timeout=WAIT_MS)
    text = source.input_value()
    button(page, "Run").click()
    expect(page.get_by_label("Output")).to_have_value(text[::-1], timeout=WAIT_MS)
    page.close()


def test_beam_mode_turns_step_off_and_fills_the_beams_tab(served_app, browser):
    from playwright.sync_api import expect

    page = opened(browser, served_app[0])
    page.get_by_text("Decoding options", exact=True).click()
    page.get_by_role("radio", name="beam", exact=True).check()
    expect(page.get_by_label("Notice")).to_have_value(re.compile("Beam mode: Step is off"), timeout=WAIT_MS)
    run(page, SPLIT)
    open_tab(page, "Beams")
    rows = page.locator("[role='tabpanel']:visible").get_by_role("row").filter(has=page.get_by_role("gridcell"))
    expect(rows.nth(1)).to_be_visible(timeout=WAIT_MS)  # the table virtualises: its rows are role="row" divs
    assert rows.first.get_by_role("gridcell").all_inner_texts()[:2] == ["1", "1"]  # step 1, rank 1
    expect(button(page, "Step")).to_be_disabled(timeout=WAIT_MS)  # last: the table is checked even if this fails
    page.close()


def test_a_narrow_screen_stacks_the_controls(served_app, browser):
    page = opened(browser, served_app[0], NARROW)
    run(page, SPLIT)
    model, source = page.get_by_label("Model").bounding_box(), page.get_by_label("Source").bounding_box()
    assert source["y"] >= model["y"] + model["height"], (model, source)
    output, now = page.get_by_label("Output").bounding_box(), page.locator(".now-view").bounding_box()
    top_k = page.locator(CANDIDATES).first.bounding_box()
    assert top_k["y"] >= now["y"] + now["height"] and now["y"] > output["y"], (now, top_k)
    page.close()


@pytest.mark.parametrize("viewport", [WIDE, NARROW], ids=["1400px", "390px"])
def test_no_view_scrolls_sideways(served_app, browser, viewport):
    """Every state of the page, at a wide and a phone-sized screen: none scrolls sideways. Screenshots for review."""
    from playwright.sync_api import expect

    page, width = opened(browser, served_app[0], viewport), viewport["width"]
    wide = "() => document.documentElement.scrollWidth"

    def check(name: str) -> None:
        page.settle()
        shot(page, f"{width}-{name}")
        assert page.evaluate(wide) <= width, name

    check("1-load")
    page.get_by_label("Source").fill(SPLIT)
    button(page, "Step").click()
    expect(page.locator(".now-view")).to_contain_text("Step 1 wrote", timeout=WAIT_MS)
    check("2-step")
    run(page, SPLIT)
    check("3-run")
    page.get_by_label("Source").fill("")
    button(page, "Run").click()
    expect(page.locator("[data-testid='toast-body'].warning")).to_be_visible(timeout=WAIT_MS)
    check("4-error")
    page.get_by_test_id("toast-close").click()  # on a phone the toast covers the tabs
    open_tab(page, "Encoder self-attention")
    check("5-encoder")
    page.locator(CANDIDATES).nth(1).click()
    expect(page.get_by_label("Before the what-if")).to_be_visible(timeout=WAIT_MS)
    open_tab(page, "Compare")
    page.wait_for_function(
        "() => [...document.querySelectorAll('.js-plotly-plot')].some(p => p.offsetParent !== null"
        " && p.data.length === 2 && p.closest('.compare-view'))",
        timeout=WAIT_MS,
    )
    check("6-compare")
    open_tab(page, "Cross-attention")
    run(page, PARAGRAPH)
    check("7-paragraph")
    page.get_by_text("Decoding options", exact=True).click()
    page.get_by_role("radio", name="beam", exact=True).check()
    run(page, SPLIT)
    open_tab(page, "Beams")
    check("8-beams")
    page.close()


def test_a_long_paragraph_keeps_the_page_short_and_the_focus_scrolls(served_app, browser):
    page = opened(browser, served_app[0])
    run(page, PARAGRAPH)
    assert len(PARAGRAPH.split()) >= 60
    assert page.evaluate("() => document.documentElement.scrollHeight") <= 4 * WIDE["height"]
    open_tab(page, "Encoder self-attention")  # a row per source word
    most = page.evaluate(MAX_ROWS_SHOWN)
    page.wait_for_function(f"() => ({FIGURE})()?.data[1]?.y.length > {most}", timeout=WAIT_MS)
    low, high = page.evaluate(f"() => ({FIGURE})().layout.yaxis2.range")
    assert abs(high - low) <= most, (low, high)
    assert page.evaluate("() => document.documentElement.scrollHeight") <= 4 * WIDE["height"]
    page.close()


def test_a_reversal_longer_than_training_says_it_will_degrade(served_app, browser):
    from playwright.sync_api import expect

    page = opened(browser, served_app[0])
    pick_model(page, "reverse")
    run(page, "abcdefghijklmnopqrstuvwxyz0123456789")
    expect(page.get_by_label("Notice")).to_have_value(re.compile("longer than any .* degrade"), timeout=WAIT_MS)
    page.close()


def test_unmerged_pieces_are_marked_with_hashes_never_the_boundary_mark(served_app, browser):
    page = opened(browser, served_app[0])
    run(page, SPLIT)
    focus_x_is(page, SPLIT_WORDS)
    page.get_by_label("Merge pieces into words").uncheck()
    page.wait_for_function(f"() => ({FOCUS_X})().length > {len(SPLIT_WORDS)}", timeout=WAIT_MS)
    labels = page.evaluate(FOCUS_X)
    assert "Rasen" not in labels and "##asen" in labels, labels
    assert not any("▁" in label for label in labels), labels
    page.close()


def test_the_show_step_slider_goes_back_to_step_0(served_app, browser):
    from playwright.sync_api import expect

    page = opened(browser, served_app[0])
    run(page, SPLIT)
    now = page.locator(".now-view")
    expect(now).to_contain_text(re.compile(r"Step [1-9]\d* wrote"), timeout=WAIT_MS)
    number = page.get_by_label("number input for Show step")
    number.fill("0")
    number.press("Tab")  # this Gradio's slider fires "release" when its number box loses focus (not on Enter)
    expect(now).to_contain_text("nothing written yet", timeout=WAIT_MS)
    page.close()


MARKUP = [
    "<script>alert(1)</script>",
    "<img src=x onerror=alert(2)>",
    '<a href="https://example.invalid/">link</a>',
    "<b>bold</b>",
    "<svg onload=alert(3)>",
    "${alert(5)}",  # a JavaScript template literal's substitution
    "\\u003cb\\u0041",  # a backslash-u escape, as a JSON or JavaScript string would read it
    "</script><script>alert(6)</script>",  # the end of a script element, then a new one
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
    from attention_lab.models.registry import Registry
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
            src_vocab_size=tokenizer.vocab_size, tgt_vocab_size=tokenizer.vocab_size, max_len=16, share_embeddings=True
        )
        pipeline = Seq2SeqPipeline(Transformer(cfg), tokenizer, name="markup")
        ids = greedy_decode(pipeline.model, torch.tensor([tokenizer.encode(source)]), 64)[0]  # as Run does
        if ids and tokenizer.id_to_token(ids[-1]) == TEMPLATE_TOKEN:
            break
    else:
        raise AssertionError("no seed gives the wanted output")
    demo = app.build_demo(Registry.of({"markup": pipeline}))
    port = free_port()
    demo.launch(server_name="127.0.0.1", server_port=port, prevent_thread_lock=True, quiet=True, **app.LAUNCH_OPTIONS)
    yield f"http://127.0.0.1:{port}/", pipeline, source
    demo.close()


INJECTED = """() => ({
    images: document.querySelectorAll('img[src="x"]').length,
    links: [...document.querySelectorAll('a')].filter(a => ((a.getAttribute('href') || '') +
        (a.getAttributeNS('http://www.w3.org/1999/xlink', 'href') || '')).includes('example.invalid')).length,
    svgs: [...document.querySelectorAll('svg')].filter(s => s.getAttribute('onload')).length,
    bold: [...document.querySelectorAll('.now-view b b, .js-plotly-plot tspan')].filter(
        s => s.textContent === 'bold').length,
    scripts: [...document.scripts].filter(s => s.textContent.includes('alert(')).length,
})"""
HOVER = "() => { const t = document.querySelector('.hoverlayer .hovertext'); return t ? t.textContent : null; }"


def focus_hover(page) -> str:
    """Move the mouse onto the middle of the open tab's focused head and return the hover label's text."""
    area = page.locator(".attention-view .draglayer .x2y2 .nsewdrag").first
    area.scroll_into_view_if_needed()
    box = area.bounding_box()
    page.mouse.move(box["x"] + box["width"] * 0.5, box["y"] + box["height"] * 0.5)
    page.wait_for_function(f"() => ({HOVER})() !== null", timeout=WAIT_MS)
    return page.evaluate(HOVER).replace("\u200b", "")


def test_markup_in_tokens_is_shown_as_text_and_never_runs(markup_app, browser):
    from playwright.sync_api import expect

    url, pipeline, source = markup_app
    expected = pipeline.generate([source], max_new_tokens=64)[0]
    tokens = pipeline.tokenizer.tokens(pipeline.tokenizer.encode(source))  # some tokens hold spaces: <unk> here
    assert TEMPLATE_TOKEN in expected and "<b>bold</b>" in tokens
    page = browser.new_page(viewport=WIDE)
    dialogs, requests = [], []
    page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
    page.on("request", lambda request: requests.append(request.url))
    page.goto(url)
    page.get_by_label("Source").fill(source)
    button(page, "Run").click()
    expect(page.get_by_label("Output")).to_have_value(expected, timeout=WAIT_MS)  # the markup, as text
    words = page.locator(".now-view .word")
    expect(words).to_have_text(tokens, timeout=WAIT_MS)  # each source token, literally
    expect(page.locator(".now-view .now-heading")).to_contain_text(f"wrote {TEMPLATE_TOKEN}")
    expect(page.locator(CANDIDATES).first).to_contain_text(TEMPLATE_TOKEN)  # the top-k label, literally

    page.wait_for_function(f"() => ({FIGURE})() && ({FIGURE})().data.length === 2", timeout=WAIT_MS)
    ticks = page.evaluate(f"() => [...({FIGURE})().querySelectorAll('.x2tick text')].map(t => t.textContent)")
    most = page.evaluate(MAX_LABEL)
    shown = [t if len(t) <= most else t[: most - 1] + "…" for t in tokens]
    assert [t.replace("\u200b", "") for t in ticks] == shown, ticks  # whole tags, not bold or a break
    hover = re.fullmatch(r"output \(the step that wrote it\): (.*)source: (.*)weight: [\d.]+", focus_hover(page))
    assert hover and hover[1] in MARKUP and hover[2] in tokens, hover  # the hovered tokens, literally

    page.get_by_label("Source").fill("<img src=x onerror=alert(4)>")  # not in the vocabulary: named in a notice
    button(page, "Run").click()
    expect(page.get_by_label("Notice")).to_have_value(re.compile(r"less-than sign \(U\+003C\)"), timeout=WAIT_MS)

    assert page.evaluate(INJECTED) == {"images": 0, "links": 0, "svgs": 0, "bold": 0, "scripts": 0}
    assert dialogs == []
    assert not [u for u in requests if u.endswith("/x") or "example.invalid" in u]
    shot(page, "markup")
    page.close()
