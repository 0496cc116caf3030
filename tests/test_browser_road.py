"""In Chromium: the app's step loop decodes in the page once the model's page copy has loaded (decoding/in_page.mjs).

- With the copy loaded, Run, Step, Back, Reset, the keys and a what-if on three sentences (two de-en, one reversal)
  send the server no request, and write the tokens the library writes (the server's).
- With WebAssembly switched off (NO_WASM) the page says the server decodes, and the same clicks give the same
  tokens from the server.
- After a what-if in the page, the Why, Flow and Trust tabs show that decoding, and Export writes it: the server
  rebuilt it.
- While a tab the server draws is open, the server takes the step loop's clicks (one request, which decodes and
  draws), the line says so, and back on the Attention tab the page goes on from the server's decoding.
- The line that says where the decoding happens fits a laptop, a projector and a phone.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.browser import LAPTOP, NARROW, PROJECTOR, WAIT_MS, button, open_tab, opened, pick_model, shot, typed_source
from tests.conftest import CHROMIUM, CHROMIUM_ARGS
from transformer import DecodingSession

pytestmark = pytest.mark.slow

SENTENCES = (("de-en", "Wie geht es dir heute?"), ("de-en", "Das Haus ist alt."), ("reverse", "abcdef12"))
TOKENS = "() => window.attentionLab.decoding ? window.attentionLab.decoding.steps.map((s) => s.token) : []"
# the requests that ask the server for work: an event's join, or a call through the API. Not Gradio's answer stream
# (queue/data): the client opens it after a join, and opens it again while an event asked earlier is unanswered (seen
# under load after a test's listener was added: the stream alone, no join), and a stream asks nothing new
ASKS = ("/gradio_api/queue/join", "/gradio_api/run/", "/gradio_api/call/")
# WebAssembly switched off: Debian's Chromium 156 still exposes it with --js-flags=--noexpose_wasm, and has none
# with V8's --jitless (which runs no compiled code, WebAssembly included)
NO_WASM = "--js-flags=--jitless"


def on_the_road(page, model: str, where: str = "page") -> None:
    """Wait until `model` is chosen, its switch answered, and the page says where it decodes ("page" or "server"). A
    click made while the switch is on its way is held, and after the road's HOLD_MS passed to the server: under load
    a test that clicked then counted the server's answer as the page's."""
    if page.get_by_label("Model").input_value() != model:
        pick_model(page, model)
    switched = "!(window.attentionLabRoad?.switching?.())"
    page.wait_for_function(f"() => document.body.dataset.road === {where!r} && {switched}", timeout=120_000)


def library(registry, model: str, text: str, what_if: tuple[int, int] | None = None) -> list[int]:
    """The tokens the library writes for `text` (the server's step loop), with a what-if (step, token) if given."""
    pipeline = registry.entry(model).pipeline
    session = DecodingSession(pipeline.model, pipeline.tokenizer.encode(text), top_k=8)
    session.run()
    if what_if:
        at, token = what_if
        session.rewind(at - 1)
        session.step(force=token)
        session.run()
    return session.tokens


def click(page, name: str, steps_before: int | None = None) -> None:
    """Click a step loop button and wait until the page's decoding changed."""
    held = page.evaluate("() => JSON.stringify(window.attentionLab.key)")
    button(page, name).click()
    page.wait_for_function(f"() => JSON.stringify(window.attentionLab.key) !== {held!r}", timeout=WAIT_MS)


def play(page, registry, model: str, text: str, sent: list | None = None) -> list[str]:
    """`text` typed as the Source, then Run, Back twice, the → key at the last step, Reset, Step, Run and a what-if:
    each checked against the library's tokens; `sent`: the requests the page sends, none of them after the typing.
    Returns what the page's decoding read at the end (its tokens, as labels)."""
    from playwright.sync_api import expect

    output = page.get_by_label("Output")
    expected = library(registry, model, text)
    typed_source(page, text, sent is not None)
    before = len(sent) if sent is not None else 0
    click(page, "Run")
    assert page.evaluate(TOKENS) == expected
    expect(output).to_have_value(registry.entry(model).pipeline.tokenizer.decode(expected))
    click(page, "Back")
    click(page, "Back")
    assert page.evaluate(TOKENS) == expected[:-2]
    page.locator("h1, .lab-title").first.click()  # no text box focused: the keys are the page's
    page.keyboard.press("End")
    held = page.evaluate("() => JSON.stringify(window.attentionLab.key)")
    page.keyboard.press("ArrowRight")  # at the last step: decodes the next one
    page.wait_for_function(f"() => JSON.stringify(window.attentionLab.key) !== {held!r}", timeout=WAIT_MS)
    assert page.evaluate(TOKENS) == expected[:-1]
    click(page, "Reset")
    expect(output).to_have_value("")
    click(page, "Step")
    assert page.evaluate(TOKENS) == expected[:1]
    click(page, "Run")
    page.evaluate("() => { window.attentionLab.shown = 0; }")
    page.locator("#lab-steps .token[data-step='2']").click()  # show step 2, then what if another token there?
    candidate = page.locator(".candidates .candidate:not(.taken)").first
    token = int(candidate.get_attribute("data-token"))
    held = page.evaluate("() => JSON.stringify(window.attentionLab.key)")
    candidate.click()
    page.wait_for_function(f"() => JSON.stringify(window.attentionLab.key) !== {held!r}", timeout=WAIT_MS)
    assert page.evaluate(TOKENS) == library(registry, model, text, (2, token))
    if sent is not None:
        page.wait_for_timeout(300)
        assert sent[before:] == [], (model, text)
    return page.evaluate("() => window.attentionLab.decoding.out.labels")


def test_with_the_page_copy_loaded_the_step_loop_sends_no_request(served_app, browser):
    url, registry, _ = served_app
    page = opened(browser, url, LAPTOP, road="page")
    sent = []
    page.on("request", lambda r: sent.append(r.url) if any(q in r.url for q in ASKS) else None)
    for model, text in SENTENCES:
        on_the_road(page, model)
        page.settle()
        play(page, registry, model, text, sent)
    shot(page, "road-laptop", full_page=False)
    page.close()


def test_without_webassembly_the_server_answers_the_same_clicks(served_app, browser):
    url, registry, _ = served_app
    args = [*CHROMIUM_ARGS, NO_WASM]
    without = browser.browser_type.launch(executable_path=CHROMIUM, args=args)
    page = opened(without, url, LAPTOP, road="page")
    assert page.evaluate("() => typeof WebAssembly") == "undefined"
    sent = []
    page.on("request", lambda r: sent.append(r.url) if "/gradio_api/queue/join" in r.url else None)
    model, text = SENTENCES[0]
    on_the_road(page, model, "server")
    assert "no WebAssembly" in page.locator(".road-line").inner_text()
    play(page, registry, model, text)
    assert len(sent) >= 8  # every click went to the server
    without.close()


def test_after_a_what_if_in_the_page_why_flow_and_trust_show_that_decoding(served_app, browser):
    url, registry, _ = served_app
    page = opened(browser, url, LAPTOP, road="page")
    model, text = SENTENCES[0]
    on_the_road(page, model)
    labels = play(page, registry, model, text)
    forced = labels[1]  # the what-if's token, written at step 2
    page.locator("#lab-steps .token[data-step='2']").click()
    open_tab(page, "Why")
    why = page.locator("#lab-views").get_by_text(re.compile(f"Step 2 wrote {re.escape(forced)} .*forced by a what-if"))
    why.first.wait_for(timeout=WAIT_MS)
    open_tab(page, "Flow")
    page.get_by_text(f"Step 2 wrote “{forced}”").first.wait_for(timeout=WAIT_MS)
    open_tab(page, "Trust")
    scored = page.locator("#lab-views").get_by_text("The model's translation, scored").first
    scored.wait_for(timeout=WAIT_MS)
    page.locator("#lab-views .trust-token", has_text=f"2. {forced}").first.wait_for(timeout=WAIT_MS)
    open_tab(page, "Attention")  # Export: the record of the decoding the page shows, a step back made in the page
    page.settle()
    click(page, "Back")
    page.get_by_text("Export", exact=True).click()
    button(page, "Attention as JSON").click()
    with page.expect_download(timeout=WAIT_MS) as download:
        page.locator("a[download]").last.click(timeout=WAIT_MS)
    record = json.loads(Path(download.value.path()).read_text(encoding="utf-8"))
    tokenizer = registry.entry(model).pipeline.tokenizer
    assert record["output_tokens"] == [tokenizer.id_to_token(t) for t in page.evaluate(TOKENS)]
    page.close()


def test_with_a_tab_the_server_draws_open_the_server_takes_the_clicks(served_app, browser):
    url, registry, _ = served_app
    page = opened(browser, url, LAPTOP, road="page")
    model, text = SENTENCES[1]
    on_the_road(page, model)
    expected = library(registry, model, text)
    typed_source(page, text)
    click(page, "Step")  # in the page
    # a copy with no gradients graph (an int8 copy's, or one the exporter cannot write): its gradient methods are the
    # server's
    page.wait_for_function(f"() => window.attentionLabRoad.explaining.get({model!r}) === 'ready'", timeout=120_000)
    page.evaluate(f"() => {{ delete window.attentionLabRoad.loops.get({model!r}).model.analyses.gradients; }}")
    open_tab(page, "Why")
    page.locator("#why-method input[value='input_x_gradient']").check()
    page.wait_for_function("() => document.body.dataset.road === 'server'", timeout=WAIT_MS)
    from playwright.sync_api import expect

    # the road turns to the server as the tab opens, and says why once the tab's module has loaded
    expect(page.locator(".road-line")).to_contain_text("what this tab shows now is made there", timeout=WAIT_MS)
    why = page.locator("#lab-views").get_by_text(re.compile("Step 1 wrote"))
    why.first.wait_for(timeout=WAIT_MS)  # the tab drawn from the page's decoding, its fill done
    page.settle()
    sent = []
    page.on("request", lambda r: sent.append(r.url) if "/gradio_api/queue/join" in r.url else None)
    click(page, "Step")
    assert page.evaluate(TOKENS) == expected[:2] and len(sent) == 1  # the server went on from the page's step
    page.locator("#lab-views").get_by_text(re.compile("Step 2 wrote")).first.wait_for(timeout=WAIT_MS)
    open_tab(page, "Attention")
    on_the_road(page, model)
    page.settle()
    before = len(sent)
    click(page, "Step")
    click(page, "Run")
    assert page.evaluate(TOKENS) == expected  # the page went on from the server's decoding
    page.wait_for_timeout(300)
    assert sent[before:] == []
    page.close()


@pytest.fixture(scope="module")
def decoding_in_the_page(served_app, browser):
    """One page on de-en, decoding in the page, for the screens below: it loads the runtime once, not three times."""
    page = opened(browser, served_app[0], LAPTOP, road="page")
    on_the_road(page, "de-en")
    yield page
    page.close()


@pytest.mark.parametrize("viewport", [LAPTOP, PROJECTOR, NARROW], ids=["laptop", "projector", "phone"])
def test_where_the_decoding_happens_is_said_in_one_line_that_fits(decoding_in_the_page, viewport):
    page = decoding_in_the_page
    page.set_viewport_size(viewport)  # the page lays itself out again at once, as on a window resized
    line = page.locator(".road-line")
    assert line.inner_text() == "Decodes in this page."
    box = line.bounding_box()
    assert box["height"] < 40 and box["x"] + box["width"] <= viewport["width"]
    shot(page, f"road-{viewport['width']}", full_page=False)


def trigger_of(join) -> int | None:
    """The id of the component whose event a queue/join request asks for (Gradio's trigger_id)."""
    return json.loads(join.post_data or "{}").get("trigger_id")


def test_bad_input_gets_the_apps_own_warning_and_a_long_source_its_notice(served_app, browser):
    """A mistake found in the page is said as the app says it: the click goes to the server, which answers with its
    warning and changes nothing; a source longer than the model reads is decoded in the page, with the notice."""
    from playwright.sync_api import expect

    url, _, _ = served_app
    page = opened(browser, url, LAPTOP, road="page")
    sent = []  # each join's trigger: an event of the Source asked late, under load, is not the click's
    page.on("request", lambda r: sent.append(trigger_of(r)) if "/gradio_api/queue/join" in r.url else None)
    step = page.evaluate("() => window.gradio_config.components.find((c) => c.props.elem_id === 'lab-step').id")
    on_the_road(page, "reverse")
    for text, line in (("   ", "Type a source text first: it is empty."), ("abc!", "This model only knows")):
        typed_source(page, text)
        before, output = len(sent), page.get_by_label("Output").input_value()
        button(page, "Step").click()
        expect(page.locator("[data-testid='toast-body'].warning")).to_contain_text(line, timeout=WAIT_MS)
        page.settle()
        assert sent[before:].count(step) == 1, (text, sent[before:], step)  # the click, handed to the server
        expect(page.get_by_label("Output")).to_have_value(output)
        expect(page.get_by_label("Source")).to_have_value(text)
        page.evaluate("() => document.querySelectorAll('[data-testid=toast-close]').forEach(b => b.click())")
    long_text = "ab" * 40  # longer than the model reads
    typed_source(page, long_text)
    before = len(sent)
    button(page, "Step").click()
    notice = f"The source was {len(long_text) + 1} tokens; only the first"
    expect(page.get_by_label("Notice")).to_have_value(re.compile(re.escape(notice)), timeout=WAIT_MS)
    assert sent[before:] == []
    page.close()


def test_a_page_copy_that_fails_hands_the_page_to_the_server_and_loses_nothing(served_app, browser):
    from playwright.sync_api import expect

    url, registry, _ = served_app
    page = browser.new_page(viewport=LAPTOP)
    page.route("**/weights.bin", lambda route: route.fulfill(status=404, body="missing"))
    page.goto(url)
    page.wait_for_function("() => document.body.dataset.road === 'server'", timeout=120_000)
    line = page.locator(".road-line")
    expect(line).to_contain_text("the page copy failed (weights.bin: 404", timeout=120_000)
    page.unroute("**/weights.bin")
    page.close()
    # a copy that fails while decoding: the click goes to the server, from where the page was
    page = opened(browser, url, LAPTOP, road="page")
    on_the_road(page, "de-en")
    model, text = SENTENCES[1]
    typed_source(page, text)
    click(page, "Step")
    click(page, "Step")
    page.evaluate(
        "() => { window.attentionLabRoad.loops.get('de-en').model.decoder.run = () => { throw new Error('lost'); }; }"
    )
    click(page, "Step")
    expect(line := page.locator(".road-line")).to_contain_text("the page copy failed (lost)")
    assert page.evaluate(TOKENS) == library(registry, model, text)[:3]  # the server's third step, after the page's two
    expect(page.get_by_label("Source")).to_have_value(text)
    page.close()
