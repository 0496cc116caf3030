"""In Chromium: the explanation tabs the page makes itself (assets/here.mjs; attention_lab/assets/in_page.json) with
the page copy's explanations' graphs loaded.

- With such a tab open, Run, Back, the → key, Reset, Step and a what-if send the server no request (the step loop's
  `play` of test_browser_road), nor does opening it again, and the road's line says the page decodes and explains.
- What the tab shows for a decoding (its text, the figure's labels included) is what a page on `?road=server` shows
  for the same decoding: the same source, Run, and the same what-if at step 2.
- The Training tab's film, on the reversal model (its copy carries the training snapshots): made in the page for a
  new source with no request, and what the server's page shows, at the first snapshot and the last.
- The live file, opened from disk with the network refused, draws each of these tabs.
"""

from __future__ import annotations

import json

import pytest

from attention_lab.schema import IN_PAGE
from attention_lab.tabs import outputs
from tests.browser import LAPTOP, WAIT_MS, button, open_tab, opened, typed_source
from tests.test_browser_beam_tree import TREE, visible_node
from tests.test_browser_road import ASKS, click, on_the_road, play

pytestmark = pytest.mark.slow

DECLARED = json.loads(IN_PAGE.read_text(encoding="utf-8"))
TABS = [tab for tab in DECLARED["tabs"] if tab != "training"]  # Training: its own test, on the reversal model
TEXT = "Die Kinder spielen im Garten."
# the runs of de-en's ablations graph on its helper thread (page_copy/helper.mjs)
HELPED = "() => window.attentionLabRoad.loops.get('de-en').model.helpers?.get('ablations')?.ready?.runs ?? 0"
HELPER = "() => { const e = window.attentionLabRoad.loops.get('de-en').model.helpers?.get('ablations'); return [!!e, !!e?.ready, String(e?.ready?.broken)]; }"


def asked(request) -> str:
    """A request to the server as a failed test says it: a join names its event's trigger and function."""
    try:
        sent = json.loads(request.post_data or "{}")
    except ValueError:
        return f"{request.url} {(request.post_data or '')[:160]}"
    return f"{request.url} fn {sent.get('fn_index')} trigger {sent.get('trigger_id')} {str(sent.get('data'))[:120]}"


def recorder(sent: list):
    """A listener for the page's "request" event that adds each request for work (ASKS) to `sent`, as `asked` says it."""
    return lambda r: sent.append(asked(r)) if any(q in r.url for q in ASKS) else None


def explains(page) -> None:
    """Wait until the page decodes and explains the open tab itself."""
    page.wait_for_function("() => /explains in this page/.test(document.querySelector('.road-line')?.textContent)",
                           timeout=120_000)  # fmt: skip


def what_if(page, token: int | None = None) -> int:
    """Show step 2 and force `token` there (the first other candidate if None); the token forced."""
    page.locator("#lab-steps .token[data-step='2']").click()
    candidate = page.locator(
        ".candidates .candidate:not(.taken)" if token is None else f".candidates .candidate[data-token='{token}']"
    ).first
    token = int(candidate.get_attribute("data-token"))
    held = page.evaluate("() => JSON.stringify(window.attentionLab.key)")
    candidate.click()
    page.wait_for_function(f"() => JSON.stringify(window.attentionLab.key) !== {held!r}", timeout=WAIT_MS)
    page.locator("#lab-steps .token[data-step='2']").click()
    return token


def figures_titled_first(panel) -> str:
    """The panel's text, each plotly figure's title first among the figure's texts: where plotly puts a title among
    them depends on whether the figure was drawn afresh or updated (the page's road updates it as it steps), not on
    what it shows."""
    text = panel.inner_text()
    for figure in panel.locator(".js-plotly-plot").all():
        own = figure.inner_text()
        lines, titles = own.splitlines(), figure.locator(".gtitle").evaluate_all("els => els.map((e) => e.textContent)")
        for title in titles:
            lines.remove(title)
        text = text.replace(own, "\n".join([*titles, *lines]), 1)
    return text


# whether the panel still says it is making something ("Searching…", "Measuring every head…"): a "…" outside its
# figures (a figure's labels shorten long tokens with one), or a slow view's own placeholder anywhere, a figure's
# title among them (Trust draws "Forcing the translation on the decoder and scoring every step…" as one, and a loaded
# server's stood still past the half second read as the tab drawn)
PLACEHOLDERS = sorted({output.slow for output in outputs() if output.slow})
WAITING = (
    "(p, placeholders) => placeholders.some((text) => p.textContent.includes(text)) || "
    "[...p.querySelectorAll('*')].some((e) => !e.children.length && !e.closest('.js-plotly-plot') "
    "&& e.textContent.includes('…'))"
)


def tab_text(page, tab: str) -> str:
    """The open tab's text once it stops changing (its view drawn for the decoding shown): at most two minutes, as a
    loaded server may take that long to fill a tab's slow views. Whether a view still waits is read before the text:
    read after it, a view drawn in between passed a text still showing its placeholder as drawn (seen once)."""
    panel = page.locator(f"#tab-{tab}")
    before = None
    for _ in range(240):
        page.wait_for_timeout(500)
        waiting = panel.evaluate(WAITING, PLACEHOLDERS)
        now = figures_titled_first(panel)
        if now == before and not waiting:
            return now
        before = now
    return before


@pytest.fixture(scope="module")
def pages(served_app, browser):
    """A page that decodes and explains itself, and one on `?road=server`, shared by the tabs' tests: each opening
    loads the app, and the first its page copy and the runtime (seconds of a core each)."""
    url, _, _ = served_app
    ours = opened(browser, url, LAPTOP, road="page")
    on_the_road(ours, "de-en")
    theirs = opened(browser, url, LAPTOP, road="server")
    yield ours, theirs
    ours.context.close()
    theirs.context.close()


def typed(page, text: str) -> None:
    """`text` typed as the Source, afresh (the page may hold it from the test before)."""
    typed_source(page, "")
    typed_source(page, text)


@pytest.mark.parametrize("tab", TABS)
def test_the_tab_is_made_in_the_page_with_no_request_and_is_what_the_server_draws(served_app, pages, tab):
    _, registry, _ = served_app
    title = DECLARED["titles"][tab]
    page, theirs_page = pages
    open_tab(page, title)
    explains(page)
    sent = []
    listen = recorder(sent)
    page.on("request", listen)
    typed(page, "")
    play(page, registry, "de-en", TEXT, sent)  # no request after the typing (asserted there)
    typed(page, TEXT)
    before = len(sent)
    click(page, "Run")
    token = what_if(page)
    open_tab(page, "Attention")
    open_tab(page, title)  # opened again: the page draws it from the decoding it holds, and tells the server nothing
    ours = tab_text(page, tab)
    page.remove_listener("request", listen)
    assert sent[before:] == [], tab
    assert "explains in this page" in page.locator(".road-line").inner_text()
    if tab == "heads":  # the importance's two parts ran at once, one on the ablations graph's helper thread
        assert page.evaluate(HELPED) > 0, page.evaluate(HELPER)

    open_tab(theirs_page, "Attention")  # the tab drawn afresh for this decoding when it opens, as on the page above
    typed(theirs_page, TEXT)
    held = theirs_page.evaluate("() => JSON.stringify(window.attentionLab.key)")
    button(theirs_page, "Run").click()
    theirs_page.wait_for_function(f"() => JSON.stringify(window.attentionLab.key) !== {held!r}", timeout=WAIT_MS)
    what_if(theirs_page, token)
    open_tab(theirs_page, title)
    theirs = tab_text(theirs_page, tab)
    assert ours == theirs, tab


def listened(page) -> tuple[list[str], object]:
    """The requests for work the page sends the server from now on (as `asked` says them), and what stops listening."""
    sent = []
    listen = recorder(sent)
    page.on("request", listen)
    return sent, lambda: page.remove_listener("request", listen)


def side_b(page, model: str) -> None:
    """Choose `model` as the Two models tab's side B."""
    page.locator("#two-models-second input").click()
    page.get_by_role("option", name=model, exact=True).click()
    page.settle()


def test_two_models_with_side_b_is_made_in_the_page_with_no_request_and_is_what_the_server_draws(pages):
    """Side B a model whose copy the page holds (de-en beside itself): once it is chosen (which tells the server, as
    any of the tab's controls does), a Run, a what-if and a Step make no request, both sides made in the page; the
    tab's text is what a page on `?road=server` draws for the same decoding."""
    page, theirs_page = pages
    open_tab(page, "Two models")
    explains(page)
    side_b(page, "de-en")
    # drawn for the decoding shown as soon as gradio has set the menu's value, which it does a moment after the click
    chosen = "() => /B · de-en/.test(document.querySelector('#tab-two_models')?.textContent)"
    page.wait_for_function(chosen, timeout=WAIT_MS)
    typed(page, TEXT)
    sent, done = listened(page)
    click(page, "Run")
    token = what_if(page)
    ours = tab_text(page, "two_models")
    done()
    assert sent == []
    assert "B · de-en" in ours and "explains in this page" in page.locator(".road-line").inner_text()

    open_tab(theirs_page, "Two models")
    side_b(theirs_page, "de-en")
    typed(theirs_page, TEXT)
    held = theirs_page.evaluate("() => JSON.stringify(window.attentionLab.key)")
    button(theirs_page, "Run").click()
    theirs_page.wait_for_function(f"() => JSON.stringify(window.attentionLab.key) !== {held!r}", timeout=WAIT_MS)
    what_if(theirs_page, token)
    assert ours == tab_text(theirs_page, "two_models")
    for p in pages:
        open_tab(p, "Attention")
        p.settle()


def test_the_gradient_methods_are_made_in_the_page_with_no_request_and_are_what_the_server_draws(pages):
    """Why with input × gradient, then integrated gradients: a Run, a Back and a Step make no request, the tab made
    in the page from the copy's gradients graph; input × gradient's text is what a page on `?road=server` draws for
    the same decoding. (Choosing a method tells the server, as any of the tab's controls does.)"""
    from playwright.sync_api import expect

    page, theirs_page = pages
    method = lambda p, label: p.locator("#why-method").get_by_label(label).check()
    note = lambda p: p.locator("#why-view .why-note").first
    open_tab(page, "Why")
    explains(page)
    method(page, "Input × gradient")
    typed(page, TEXT)
    sent = []
    listen = recorder(sent)
    page.on("request", listen)
    click(page, "Run")
    expect(note(page)).to_contain_text("Input × gradient", timeout=WAIT_MS)
    ours = tab_text(page, "why")
    page.remove_listener("request", listen)
    method(page, "Integrated gradients")
    page.settle()
    page.on("request", listen)
    click(page, "Back")
    expect(page.locator("#why-view")).to_contain_text("Completeness", timeout=120_000)
    click(page, "Step")
    expect(page.locator("#why-view")).to_contain_text("Completeness", timeout=120_000)
    page.remove_listener("request", listen)
    assert sent == []
    assert "explains in this page" in page.locator(".road-line").inner_text()
    method(page, "Occlusion")  # as the module's other tests expect it

    open_tab(theirs_page, "Attention")
    typed(theirs_page, TEXT)
    click(theirs_page, "Run")
    open_tab(theirs_page, "Why")
    method(theirs_page, "Input × gradient")
    expect(note(theirs_page)).to_contain_text("Input × gradient", timeout=WAIT_MS)
    theirs = tab_text(theirs_page, "why")
    method(theirs_page, "Occlusion")
    assert ours == theirs


def ablated(page, choice: str) -> dict:
    """`choice` chosen among the Heads to ablate, then Ablate (the Heads tab open, the Source typed and Run): what
    the step loop and the tab show once the effects are drawn."""
    chooser = page.get_by_label("Heads to ablate")
    chooser.click()
    page.get_by_role("option", name=choice, exact=True).click()
    page.keyboard.press("Escape")
    page.settle()
    click(page, "Ablate")
    page.locator("#heads-effects").get_by_text("KL(original ‖ ablated)").first.wait_for(timeout=WAIT_MS)
    return {
        "output": page.get_by_label("Output").input_value(),
        "before": page.get_by_label("Before the ablation").input_value(),
        "line": page.get_by_label("Notice").input_value(),
        "tab": tab_text(page, "heads"),
    }


def test_ablate_is_made_in_the_page_with_no_request_and_is_what_the_server_draws(pages):
    """With Heads open, Ablate decodes again with the chosen heads removed throughout in the page, with no request:
    the Output, the decoding before it (its label), the step loop's line naming the heads, and the tab (the summary of
    the decoding before the ablation, and what the ablation changed at each step) are what a page on `?road=server`
    shows for the same source and heads."""
    page, theirs_page = pages
    choice, sent = "All cross-attention heads", []
    listen = recorder(sent)
    for p in (page, theirs_page):
        open_tab(p, "Heads")
        typed(p, TEXT)
        click(p, "Run")
    explains(page)
    page.on("request", listen)
    ours = ablated(page, choice)
    page.remove_listener("request", listen)
    theirs = ablated(theirs_page, choice)
    assert sent == []
    assert ours["output"] != ours["before"]
    assert "Ablated throughout: all cross-attention heads (Reset to undo)." in ours["line"]
    assert ours == theirs


def test_compare_is_drawn_from_the_pages_own_decoding_with_no_request(pages):
    """Compare (the decoding before a what-if beside this one) is drawn from what the page holds: with the copy
    loaded, opening it, a what-if and a Back with it open send no request, and it draws both decodings."""
    page, _ = pages
    open_tab(page, "Attention")
    typed(page, TEXT)
    click(page, "Run")
    sent = []
    page.on("request", recorder(sent))
    open_tab(page, "Compare")
    what_if(page)
    both = "() => [...document.querySelectorAll('#compare-view .js-plotly-plot')].some(p => p.data.length === 2)"
    page.wait_for_function(both, timeout=WAIT_MS)
    click(page, "Back")
    page.wait_for_timeout(300)
    assert sent == []
    assert page.locator(".road-line").inner_text().startswith("Decodes in this page")


def strategy(page, name: str) -> None:
    page.get_by_text("Decoding options", exact=True).click()
    page.get_by_role("radio", name=name, exact=True).check()
    page.get_by_text("Decoding options", exact=True).click()
    page.settle()


def test_a_beam_search_in_the_page_fills_the_beams_tab_with_no_request_as_the_server_does(pages):
    """With Beams open, a Run in beam mode is searched in the page and its live beams listed there, with no request:
    the table a page on `?road=server` shows for the same source."""
    page, _ = pages
    tables = []
    for p in pages:
        open_tab(p, "Beams")
        typed(p, TEXT)
        strategy(p, "beam")
        sent = []
        p.on("request", recorder(sent))
        click(p, "Run")
        p.locator("#beams-view tbody tr").nth(1).wait_for(timeout=WAIT_MS)
        tables.append(tab_text(p, "beams"))
        assert (sent == []) == (p is page)  # the server's page asks the server
        strategy(p, "greedy")
    ours, theirs = tables
    assert ours.startswith("Beam search: the live beams") and "log-prob" in ours
    assert ours == theirs


def test_a_beam_tree_nodes_hypothesis_and_decoding_on_from_it_are_made_in_the_page_with_no_request(pages):
    """With the Beam tree open and the tree made in the page, a click on a pruned node draws its hypothesis's
    attention, "Decode on from here" makes it the decoding and Back undoes it, with no request: the tab (the
    hypothesis's line and views), the Output and the decoding before it are what a page on `?road=server` shows for
    the same clicks."""
    from playwright.sync_api import expect

    shown = []
    for p in pages:
        open_tab(p, "Beam tree")
        typed(p, TEXT)
        click(p, "Run")
        p.wait_for_function(f"() => {{ const gd = ({TREE})(); return gd && gd.data.length > 3; }}", timeout=WAIT_MS)
        p.settle()
        greedy = p.get_by_label("Output").input_value()
        sent, done = listened(p)
        node = visible_node(p, "pruned", 3)
        p.mouse.click(node["x"], node["y"])
        expect(p.locator("#beam-hypothesis .beam-hypothesis-line")).to_contain_text("at step 3", timeout=WAIT_MS)
        hypothesis = tab_text(p, "beam_tree")
        click(p, "Decode on from here, greedily")
        expect(p.get_by_label("Before the branch from the tree")).to_have_value(greedy, timeout=WAIT_MS)
        decoded = p.get_by_label("Output").input_value()
        click(p, "Back")
        expect(p.get_by_label("Output")).to_have_value(greedy, timeout=WAIT_MS)
        done()
        assert decoded != greedy
        assert (sent == []) == (p is pages[0]), sent  # the server's page asks the server
        shown.append((hypothesis, decoded))
        open_tab(p, "Attention")
    assert shown[0] == shown[1]


def film_text(page, at: int | None = None) -> str:
    """The Training tab's text, with the snapshot slider at `at` (as it is if None)."""
    if at is not None:
        page.locator("#snapshot").evaluate("(r, at) => { r.value = at; r.dispatchEvent(new Event('input')); }", at)
    return tab_text(page, "training")


def test_the_training_film_is_made_in_the_page_with_no_request_and_is_what_the_server_draws(pages):
    """On the reversal model, a Run of a new source with Training open, a Step back and the slider: no request, and
    the film's text (each snapshot's line, output, chart and cross-attention) is what a page on the server's road
    shows for that source. Opened for a source typed and not decoded, it films that source, with no request."""
    ours_page, theirs_page = pages
    source = "attentionisallyouneed"
    on_the_road(ours_page, "reverse")
    open_tab(ours_page, "Training")
    explains(ours_page)
    typed(ours_page, source)
    sent = []
    listen = recorder(sent)
    ours_page.on("request", listen)
    click(ours_page, "Run")
    ours = [film_text(ours_page, 0), film_text(ours_page, 9)]
    click(ours_page, "Back")
    ours.append(film_text(ours_page))
    ours_page.remove_listener("request", listen)
    assert sent == []
    assert "explains in this page" in ours_page.locator(".road-line").inner_text()
    assert "Snapshot 10 of 10: Step 5,500 (the reverse model the other tabs show)" in ours[1]

    on_the_road(theirs_page, "reverse", "server")
    open_tab(theirs_page, "Attention")
    typed(theirs_page, source)
    click(theirs_page, "Run")
    open_tab(theirs_page, "Training")
    theirs = [film_text(theirs_page, 0), film_text(theirs_page, 9)]
    assert ours[:2] == theirs
    assert ours[2] == theirs[1]  # a Step changes no snapshot's decoding of the source
    open_tab(ours_page, "Attention")
    typed(ours_page, "abc123")  # a new source, not decoded: the tab films it as it opens, as the server would
    # the server's answer to the typing may ask the page to fetch a slow output it made ahead (page/fill.mjs, from the
    # Attention tab, which the page does not make): that request leaves once the answer is drawn, which a loaded
    # machine took longer than settle's 300 ms of quiet to do (seen once, as a request counted after the clear below)
    ours_page.settle(2000)
    sent.clear()
    ours_page.on("request", listen)
    open_tab(ours_page, "Training")
    assert "Output of this snapshot: 321cba" in film_text(ours_page, 9)
    ours_page.remove_listener("request", listen)
    assert sent == []
    for page in pages:
        open_tab(page, "Attention")
        on_the_road(page, "de-en", "page" if page is ours_page else "server")
