"""In Chromium, with every request to the server delayed as a distant Space delays it: what a person types while a
model switch is answered is theirs. Four times, each model twice, the model is switched and a sentence typed within
0.1 s, then Run: the Run decodes what was typed, and the Source still holds it after every answer has come. (With every
answer 400 ms away, each switch's answer comes after the typing: one switch already shows a switch that overwrites.)

And an answer whose stream ends late (the redraw of a new Source, held open as a loaded server holds it): the page
decodes a Run itself meanwhile, and what gradio sends again as that stream ends never stands over what the page
wrote (Step off once the decoding has finished)."""

import pytest

from tests.browser import HELD_S, WAIT_MS, button, hold_next_stream, opened
from transformer import greedy_decode

pytestmark = pytest.mark.slow

LATENCY_MS = 400  # each request's round trip, as a Space far away answers it
# Typed right after each switch: a text the model can read, and not the example the switch would offer.
TYPED = {"reverse": "typed{}abc", "de-en": "Das Haus ist alt und {} Jahre."}
# The page's road as a test reads it when a wait for it fails: its loops, the copies loading, failed or explained,
# whether a switch of model is on its way (the decoding shown against the Model menu), a click held, the road's line.
ROAD_STATE = """() => { const r = attentionLabRoad; return JSON.stringify({loops: [...r.loops.keys()],
  loading: [...r.models.keys()], broken: [...r.broken.entries()], explaining: [...r.explaining.entries()],
  switching: r.switching(), shown: window.attentionLab.decoding?.model ?? null,
  menu: document.querySelector('#lab-model input')?.value, held: !!r.holding, passing: r.passing,
  line: document.querySelector('.road-line')?.textContent}); }"""


def expected(registry, model: str, text: str) -> str:
    pipeline = registry.entry(model).pipeline
    return pipeline.tokenizer.decode(greedy_decode(pipeline.model, pipeline.encode_batch([text]))[0])


def test_a_model_switch_never_overwrites_what_was_typed_after_it(served_app, browser):
    from playwright.sync_api import expect

    url, registry, _ = served_app
    page = opened(browser, url, road="page")  # as a person opens it: the page decodes itself once it can
    network = page.context.new_cdp_session(page)
    network.send("Network.enable")
    conditions = {"offline": False, "latency": LATENCY_MS, "downloadThroughput": -1, "uploadThroughput": -1}
    network.send("Network.emulateNetworkConditions", conditions)
    source, output = page.get_by_label("Source"), page.get_by_label("Output")
    for i in range(4):
        model = ("reverse", "de-en")[i % 2]
        text = TYPED[model].format(i + 2)
        page.get_by_label("Model").click()
        page.get_by_role("option", name=model, exact=True).click()
        page.wait_for_timeout(50)  # typed within 0.1 s of the switch, long before its answer comes
        source.fill(text)
        button(page, "Run").click()
        expect(output).to_have_value(expected(registry, model, text), timeout=WAIT_MS)
        page.settle()
        page.wait_for_timeout(2 * LATENCY_MS)  # every answer of the switch has come (and its example was offered)
        expect(source).to_have_value(text)
        expect(output).to_have_value(expected(registry, model, text))
    page.close()


def test_an_answer_that_ends_late_never_writes_over_what_the_page_decoded_after_it(served_app, browser, monkeypatch):
    from playwright.sync_api import expect

    url, registry, _ = served_app
    page = opened(browser, url, road="page")
    page.wait_for_function("() => document.body.dataset.road === 'page'", timeout=120_000)
    source, output, step = page.get_by_label("Source"), page.get_by_label("Output"), button(page, "Step")
    ran = "() => performance.getEntriesByName('road:run').length"  # the Runs the page answered itself
    first, then = (TYPED["de-en"].format(n) for n in (7, 8))
    source.fill(first)
    page.settle()
    button(page, "Run").click()  # decoded to the end in the page: Step is off
    expect(output).to_have_value(expected(registry, "de-en", first), timeout=WAIT_MS)
    expect(step).to_be_disabled(timeout=WAIT_MS)
    page.settle()
    hold_next_stream(monkeypatch, HELD_S)
    source.fill(then)  # redrawn by the server, from the page's decoding: Step is on (it would decode the new Source)
    expect(step).to_be_enabled(timeout=WAIT_MS)  # that answer came; its stream is held open
    runs = page.evaluate(ran)
    button(page, "Run").click()
    expect(output).to_have_value(expected(registry, "de-en", then), timeout=WAIT_MS)
    expect(step).to_be_disabled(timeout=WAIT_MS)
    assert page.evaluate(ran) == runs + 1  # the page decoded it, with no request
    page.wait_for_timeout(HELD_S * 1000 + 1500)  # the redraw's stream has ended, sending its answer again
    page.settle()
    expect(step).to_be_disabled()
    expect(output).to_have_value(expected(registry, "de-en", then))
    page.close()


def test_a_run_clicked_while_a_model_switch_is_answered_waits_for_its_answer(served_app, browser, monkeypatch):
    """A Run sent beside a switch of model could be answered in the page before the switch (nothing decoded) and be
    wiped by it. So a click made while the switch is on its way (here its answer takes 1.5 s) waits for that answer,
    then is taken as it would be: by the page, which decodes both models here."""
    import time

    from playwright.sync_api import expect

    from attention_lab.decoding.actions import DecodingActions

    url, registry, _ = served_app
    page = opened(browser, url, road="page")
    source, output = page.get_by_label("Source"), page.get_by_label("Output")
    ran = "() => performance.getEntriesByName('road:run').length"  # the Runs the page answered itself
    for model in ("reverse", "de-en"):  # each model's copy loaded, each decoded in the page
        page.get_by_label("Model").click()
        page.get_by_role("option", name=model, exact=True).click()
        here = f"() => attentionLabRoad.loops.has('{model}') && !attentionLabRoad.switching()"
        try:
            page.wait_for_function(here, timeout=120_000)
        except Exception as err:  # seen once in a loaded run: what the road held then says which wait never ended
            raise AssertionError(f"{model} never ready in the page: {page.evaluate(ROAD_STATE)}") from err
        page.settle()
        runs = page.evaluate(ran)
        button(page, "Run").click()
        page.wait_for_function(f"() => ({ran})() === {runs + 1}", timeout=WAIT_MS)
        page.settle()
    switch = DecodingActions.switch

    def slowly(self, user, c):
        time.sleep(1.5)
        return switch(self, user, c)

    monkeypatch.setattr(DecodingActions, "switch", slowly)
    text = TYPED["reverse"].format(9)
    runs = page.evaluate(ran)
    page.get_by_label("Model").click()
    page.get_by_role("option", name="reverse", exact=True).click()
    expect(page.get_by_label("Model")).to_have_value("reverse")  # chosen; the switch's answer is on its way
    source.fill(text)
    before = page.evaluate(ROAD_STATE)  # what the road saw as the Run was clicked
    button(page, "Run").click()
    try:
        expect(output).to_have_value(expected(registry, "reverse", text), timeout=WAIT_MS)
    except AssertionError as err:
        raise AssertionError(f"before the Run: {before}; after: {page.evaluate(ROAD_STATE)}") from err
    assert page.evaluate(ran) == runs + 1  # taken by the page once the switch was answered, not sent beside it
    page.settle()
    expect(output).to_have_value(expected(registry, "reverse", text))
    page.close()
