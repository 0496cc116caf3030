"""A real browser (Debian's Chromium, driven by Playwright) uses the app as a person would."""

import json
import re
import time

import pytest

from attention_lab.models.examples import first_example
from tests.browser import (
    CANDIDATES,
    FOCUS,
    FOCUS_X,
    HELD_S,
    NARROW,
    WAIT_MS,
    WIDE,
    button,
    focus_x_is,
    fresh,
    hold_next_stream,
    kind,
    open_tab,
    opened,
    opening,
    pick_model,
    ready,
    run,
    shot,
    typed_source,
)
from tests.conftest import close_app

SPLIT = "Ich muss den Rasen mähen."  # "Rasen" and "mähen" are split into pieces
SPLIT_WORDS = ["Ich", "muss", "den", "Rasen", "mähen", ".", "&lt;/s&gt;"]  # as plotly gets them: escaped
PARAGRAPH = (
    "Gestern Abend bin ich mit meinen Freunden in die Stadt gefahren, weil wir ins Kino gehen wollten. Der Film war "
    "lang, aber sehr spannend, und danach haben wir in einem kleinen Restaurant am Markt gegessen. Das Essen war gut "
    "und nicht teuer. Später sind wir dann zu Fuß nach Hause gegangen, obwohl es schon dunkel war und ein wenig "
    "regnete."
)
TRACES = f"() => {{ const gd = ({FOCUS})(); return gd ? JSON.stringify(gd.data) : null; }}"
MAX_LABEL = 16  # characters of a token shown on an axis (assets/labels.mjs)
pytestmark = pytest.mark.slow  # a real browser against a served app


def shown_labels(page) -> str:
    """Every label a reader sees: the focused head's traces and drawn text, the now-view, the top-k candidates."""
    figure = page.evaluate(
        f"() => {{ const gd = ({FOCUS})(); return JSON.stringify([gd.data.map(t => [t.x, t.y]),"
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
    pages = [opening(browser, url) for _ in range(4)]  # the page's own opening events race: give them chances,
    for page in pages:  # the four loading at once
        ready(page)
    for page in pages:
        expect(page.get_by_label("Output")).to_have_value(expected, timeout=WAIT_MS)
        expect(page.locator(".now-view")).to_contain_text(re.compile(r"Step [1-9]\d* wrote"), timeout=WAIT_MS)
        page.wait_for_function(f"() => ({FOCUS})()?.data.length === 1", timeout=WAIT_MS)  # the focused head drawn
        steps = page.locator(".steps-tokens .token")
        assert steps.count() >= 2 and page.locator(".steps-tokens .token.current").count() == 1
    shot(pages[0], "load")
    for page in pages:
        page.close()


def test_step_writes_the_first_word_and_run_the_whole_output_in_words(served_app, app_page):
    from playwright.sync_api import expect

    _, registry, _ = served_app
    pipeline = registry.entry("de-en").pipeline
    assert len(pipeline.tokenizer.encode(SPLIT)) > len(SPLIT_WORDS)  # words made of several pieces
    expected = pipeline.generate([SPLIT], max_new_tokens=64)[0]  # 64: the page's default Max length
    page = app_page
    fresh(page)
    output = page.get_by_label("Output")
    page.get_by_label("Source").fill(SPLIT)
    button(page, "Step").click()
    expect(output).to_have_value(expected.split()[0], timeout=WAIT_MS)
    expect(page.locator(".now-view")).to_contain_text("Step 1 wrote", timeout=WAIT_MS)
    button(page, "Run").click()
    expect(output).to_have_value(expected, timeout=WAIT_MS)
    focus_x_is(page, SPLIT_WORDS)
    grid = """() => { const c = document.querySelector('#views .views-grid canvas.tiles'), d = window.attentionLab.decoding;
      return [c.width > 0, c.dataset.layers === String(d.Ld), c.dataset.heads === String(d.H)]; }"""
    assert page.evaluate(grid) == [True, True, True]  # every head of every layer tiled, in a canvas of its own
    assert "▁" not in shown_labels(page)


def test_an_error_is_a_warning_and_keeps_every_view(app_page):
    from playwright.sync_api import expect

    page = app_page
    fresh(page)
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


def test_back_is_off_at_step_0_and_on_after_a_step(app_page):
    from playwright.sync_api import expect

    page = app_page
    fresh(page)
    button(page, "Reset").click()
    expect(page.get_by_label("Output")).to_have_value("", timeout=WAIT_MS)
    expect(button(page, "Back")).to_be_disabled(timeout=WAIT_MS)
    button(page, "Step").click()
    expect(page.get_by_label("Output")).not_to_have_value("", timeout=WAIT_MS)
    expect(button(page, "Back")).to_be_enabled(timeout=WAIT_MS)


def test_step_is_off_once_decoding_finished(app_page):
    from playwright.sync_api import expect

    page = app_page
    fresh(page)
    run(page, SPLIT)
    expect(page.get_by_label("Notice")).to_have_value(re.compile("Finished"), timeout=WAIT_MS)
    expect(button(page, "Step")).to_be_disabled(timeout=WAIT_MS)


def test_an_answer_whose_parts_reach_the_page_at_once_is_drawn_whole(served_app, app_page, monkeypatch):
    """A Run whose answer reaches the page before the queue's answer to joining it (the queue's stream is open for a
    Step's held answer): gradio's client then hands the page every part of the Run's stream at once, and each part's
    updates (the notice, Step off) must be drawn, not emptied by the part after (attention_lab/page/streams.py)."""
    from playwright.sync_api import expect

    _, registry, _ = served_app
    expected = registry.entry("de-en").pipeline.generate([SPLIT], max_new_tokens=64)[0]
    page, output = app_page, app_page.get_by_label("Output")
    fresh(page)
    page.get_by_label("Source").fill(SPLIT)
    page.settle()  # the Source's redraw answered: the hold is the Step's
    hold_next_stream(monkeypatch, 2 * HELD_S)
    button(page, "Step").click()
    expect(output).to_have_value(expected.split()[0], timeout=WAIT_MS)

    def late(route):
        answer = route.fetch()
        time.sleep(HELD_S / 2)  # the Run's stream comes first, on the queue's open stream
        route.fulfill(response=answer)

    page.route("**/queue/join*", late, times=1)
    button(page, "Run").click()
    expect(output).to_have_value(expected, timeout=WAIT_MS)
    expect(page.get_by_label("Notice")).to_have_value(re.compile("Finished"), timeout=HELD_S * 1000)
    expect(button(page, "Step")).to_be_disabled(timeout=HELD_S * 1000)
    page.wait_for_timeout(2 * HELD_S * 1000)  # the Step's stream has ended
    page.settle()
    expect(page.get_by_label("Notice")).to_have_value(re.compile("Finished"))
    expect(button(page, "Step")).to_be_disabled()


def test_an_answer_whose_stream_ends_late_never_takes_back_a_later_clicks(served_app, app_page, monkeypatch):
    """A Step answered, its stream held open (as a loaded server holds it), then Run: the Step's stream ends after
    the Run's answer, and what gradio then sends again must not put the Step's output and buttons back."""
    from playwright.sync_api import expect

    _, registry, _ = served_app
    expected = registry.entry("de-en").pipeline.generate([SPLIT], max_new_tokens=64)[0]
    page, output = app_page, app_page.get_by_label("Output")
    fresh(page)
    page.get_by_label("Source").fill(SPLIT)
    page.settle()  # the Source's redraw answered: the hold is the Step's
    hold_next_stream(monkeypatch, HELD_S)
    button(page, "Step").click()
    expect(output).to_have_value(expected.split()[0], timeout=WAIT_MS)
    button(page, "Run").click()
    expect(output).to_have_value(expected, timeout=WAIT_MS)
    page.wait_for_timeout(HELD_S * 1000 + 1500)  # the Step's stream has ended
    page.settle()
    expect(output).to_have_value(expected)
    expect(page.get_by_label("Notice")).to_have_value(re.compile("Finished"))
    expect(button(page, "Step")).to_be_disabled()


def test_switching_the_model_swaps_in_an_example_it_can_read(app_page):
    from playwright.sync_api import expect

    page = app_page
    fresh(page)
    pick_model(page, "reverse")
    source = page.get_by_label("Source")
    expect(source).to_have_value(re.compile(r"^[a-z0-9]+$"), timeout=WAIT_MS)
    text = source.input_value()
    button(page, "Run").click()
    expect(page.get_by_label("Output")).to_have_value(text[::-1], timeout=WAIT_MS)


def test_another_model_keeps_the_decoding_options(app_page):
    from playwright.sync_api import expect

    page = app_page
    fresh(page)
    run(page, "abc123")  # a source both models read: the model changes, the source stays
    page.get_by_text("Decoding options", exact=True).click()
    page.get_by_role("radio", name="beam", exact=True).check()
    expect(page.get_by_label("Notice")).to_have_value(re.compile("Beam mode: Step is off"), timeout=WAIT_MS)
    pick_model(page, "reverse")
    expect(page.get_by_label("Source")).to_have_value("abc123")
    expect(page.get_by_label("Notice")).to_have_value(re.compile("Beam mode: Step is off"), timeout=WAIT_MS)
    expect(button(page, "Step")).to_be_disabled(timeout=WAIT_MS)  # beam search still asked for, on the new model


def test_beam_mode_turns_step_off_and_fills_the_beams_tab(app_page):
    from playwright.sync_api import expect

    page = app_page
    fresh(page)
    page.get_by_text("Decoding options", exact=True).click()
    page.get_by_role("radio", name="beam", exact=True).check()
    expect(page.get_by_label("Notice")).to_have_value(re.compile("Beam mode: Step is off"), timeout=WAIT_MS)
    run(page, SPLIT)
    open_tab(page, "Beams")
    rows = page.locator("#beams-view tbody tr")
    expect(rows.nth(1)).to_be_visible(timeout=WAIT_MS)
    assert rows.first.locator("td").all_inner_texts()[:2] == ["1", "1"]  # step 1, rank 1
    expect(button(page, "Step")).to_be_disabled(timeout=WAIT_MS)  # last: the table is checked even if this fails


def test_a_narrow_screen_stacks_the_controls(app_page):
    page = app_page
    fresh(page, NARROW)
    run(page, SPLIT)
    model, source = page.get_by_label("Model").bounding_box(), page.get_by_label("Source").bounding_box()
    assert source["y"] >= model["y"] + model["height"], (model, source)
    output, now = page.get_by_label("Output").bounding_box(), page.locator(".now-view").bounding_box()
    top_k = page.locator(CANDIDATES).first.bounding_box()
    assert top_k["y"] >= now["y"] + now["height"] and now["y"] > output["y"], (now, top_k)


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
    # On a phone the toast covers the tabs. It also closes itself after a while, so close it without waiting for it.
    page.evaluate("() => document.querySelectorAll('[data-testid=toast-close]').forEach(b => b.click())")
    expect(page.get_by_test_id("toast-body")).to_have_count(0, timeout=WAIT_MS)
    kind(page, "encoder")
    check("5-encoder")
    page.locator(CANDIDATES).nth(1).click()
    expect(page.get_by_label("Before the what-if")).to_be_visible(timeout=WAIT_MS)
    open_tab(page, "Compare")
    page.wait_for_function(
        "() => [...document.querySelectorAll('#compare-view .js-plotly-plot')].some(p => p.data.length === 2)",
        timeout=WAIT_MS,
    )
    check("6-compare")
    open_tab(page, "Attention")
    kind(page, "cross")
    run(page, PARAGRAPH)
    check("7-paragraph")
    page.get_by_text("Decoding options", exact=True).click()
    page.get_by_role("radio", name="beam", exact=True).check()
    run(page, SPLIT)
    open_tab(page, "Beams")
    check("8-beams")
    page.close()


# the type of each trace drawn in the page (plotly's default type is scatter)
TRACE_TYPES = "() => [...document.querySelectorAll('.js-plotly-plot')].flatMap((gd) => (gd.data || []).map((t) => t.type || 'scatter'))"


def test_every_tabs_page_module_loads_and_draws_with_no_error(app_page):
    """Every tab of the tab table opened after a Run: no page module failed to load or mount, and no script error.
    (A module that throws as it mounts leaves its view empty and says so only on the console.) Every trace drawn is of
    a type the page's plotly.js holds (its bundle of the cartesian traces, assets/vendor): plotly.js draws a trace of
    any other type as nothing, with no error."""
    from attention_lab.tabs import TABS

    page = app_page
    fresh(page)
    run(page, SPLIT)
    drawn = set()
    for tab in TABS:
        open_tab(page, tab.title)
        page.settle()
        drawn |= set(page.evaluate(TRACE_TYPES))
    assert page.module_errors == []
    held = page.evaluate("() => Object.keys(window.Plotly.PlotSchema.get().traces)")
    assert {"heatmap", "scatter"} <= drawn <= set(held), (sorted(drawn), sorted(held))


def test_a_long_paragraph_keeps_the_page_short_and_the_focused_head_pans(app_page):
    page = app_page
    fresh(page)
    run(page, PARAGRAPH)
    assert len(PARAGRAPH.split()) >= 60
    assert page.evaluate("() => document.documentElement.scrollHeight") <= 4 * WIDE["height"]
    kind(page, "encoder")  # a row per source word
    page.wait_for_function(f"() => ({FOCUS})()?.data[0]?.y.length > 60", timeout=WAIT_MS)
    low, high = page.evaluate(f"() => ({FOCUS})().layout.yaxis.range")
    height = page.evaluate(f"() => ({FOCUS})().layout.height")
    assert 0 < abs(high - low) <= height / 12, (low, high, height)  # no row thinner than 12 px: it pans instead
    assert page.evaluate("() => document.documentElement.scrollHeight") <= 4 * WIDE["height"]


def test_a_reversal_longer_than_training_says_it_will_degrade(app_page):
    from playwright.sync_api import expect

    page = app_page
    fresh(page)
    pick_model(page, "reverse")
    run(page, "abcdefghijklmnopqrstuvwxyz0123456789")
    expect(page.get_by_label("Notice")).to_have_value(re.compile("longer than any .* degrade"), timeout=WAIT_MS)


def test_unmerged_pieces_are_marked_with_hashes_never_the_boundary_mark(app_page):
    page = app_page
    fresh(page)
    run(page, SPLIT)
    focus_x_is(page, SPLIT_WORDS)
    page.get_by_label("Merge pieces into words").uncheck()
    page.wait_for_function(f"() => ({FOCUS_X})().length > {len(SPLIT_WORDS)}", timeout=WAIT_MS)
    labels = page.evaluate(FOCUS_X)
    assert "Rasen" not in labels and "##asen" in labels, labels
    assert not any("▁" in label for label in labels), labels


def test_show_step_goes_back_to_step_0_and_a_token_of_the_output_shows_its_step(app_page):
    from playwright.sync_api import expect

    page = app_page
    fresh(page)
    run(page, SPLIT)
    now = page.locator(".now-view")
    expect(now).to_contain_text(re.compile(r"Step [1-9]\d* wrote"), timeout=WAIT_MS)
    slider = page.get_by_label("Show step")
    slider.fill("0")
    expect(now).to_contain_text("nothing written yet", timeout=WAIT_MS)
    assert page.locator(".steps-tokens .token.current").count() == 0  # step 0: no token marked
    page.locator(".steps-tokens .token").nth(1).click()
    expect(now).to_contain_text("Step 2 wrote", timeout=WAIT_MS)
    expect(page.locator(".steps-tokens .token.current")).to_have_attribute("data-step", "2")
    assert slider.input_value() == "2"


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

    from attention_lab.models.registry import Registry
    from tests.conftest import launched, tiny_config
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
    served = launched(Registry.of({"markup": pipeline}))
    url, _, _ = next(served)
    yield url, pipeline, source
    close_app(served)


INJECTED = """() => ({
    images: document.querySelectorAll('img[src="x"]').length,
    links: [...document.querySelectorAll('a')].filter(a => ((a.getAttribute('href') || '') +
        (a.getAttributeNS('http://www.w3.org/1999/xlink', 'href') || '')).includes('example.invalid')).length,
    svgs: [...document.querySelectorAll('svg')].filter(s => s.getAttribute('onload')).length,
    bold: [...document.querySelectorAll('.now-view b b, .js-plotly-plot tspan, .steps-tokens b')].filter(
        s => s.textContent === 'bold').length,
    scripts: [...document.scripts].filter(s => s.textContent.includes('alert(')).length,
})"""
HOVER = "() => { const t = document.querySelector('.hoverlayer .hovertext'); return t ? t.textContent : null; }"


def focus_hover(page) -> str:
    """Move the mouse onto the middle of the focused head and return the hover label's text."""
    area = page.locator("#views .views-focus .draglayer .xy .nsewdrag").first
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
    page = opening(browser, url, WIDE)
    dialogs, requests = [], []
    page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
    page.on("request", lambda request: requests.append(request.url))
    ready(page, wait_for_output=False)
    # each source typed, and its change answered, before Run is clicked (browser.py typed_source says why)
    typed_source(page, source)
    button(page, "Run").click()
    expect(page.get_by_label("Output")).to_have_value(expected, timeout=WAIT_MS)  # the markup, as text
    words = page.locator(".now-view .word")
    expect(words).to_have_text(tokens, timeout=WAIT_MS)  # each source token, literally
    expect(page.locator(".steps-tokens .token").last).to_have_text(TEMPLATE_TOKEN)  # the output, literally
    expect(page.locator(".now-view .now-heading")).to_contain_text(f"wrote {TEMPLATE_TOKEN}")
    expect(page.locator(CANDIDATES).first).to_contain_text(TEMPLATE_TOKEN)  # the top-k label, literally

    page.wait_for_function(f"() => ({FOCUS})() && ({FOCUS})().data.length === 1", timeout=WAIT_MS)
    ticks = page.evaluate(f"() => [...({FOCUS})().querySelectorAll('.xtick text')].map(t => t.textContent)")
    most = MAX_LABEL
    shown = [t if len(t) <= most else t[: most - 1] + "…" for t in tokens]
    assert [t.replace("\u200b", "") for t in ticks] == shown, ticks  # whole tags, not bold or a break
    hover = re.fullmatch(r"output \(the step that wrote it\): (.*)source: (.*)weight: [\d.]+", focus_hover(page))
    assert hover and hover[1] in MARKUP and hover[2] in tokens, hover  # the hovered tokens, literally

    typed_source(page, "<img src=x onerror=alert(4)>")  # not in the vocabulary: named in a notice
    button(page, "Run").click()
    expect(page.get_by_label("Notice")).to_have_value(re.compile(r"less-than sign \(U\+003C\)"), timeout=WAIT_MS)

    assert page.evaluate(INJECTED) == {"images": 0, "links": 0, "svgs": 0, "bold": 0, "scripts": 0}
    assert dialogs == []
    assert not [u for u in requests if u.endswith("/x") or "example.invalid" in u]
    shot(page, "markup")
    page.close()
