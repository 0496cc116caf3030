"""In Chromium, the step loop on one screen: at a laptop's 1440×900 and a projector's 1280×720, after a Run and after
each Step, Step, Show step, the Output and the focused head (a plotly figure of at least 300×200 px) are all in view
without scrolling; inside a Space's iframe too. The keys move the shown step, the focused head and the kind, and do
nothing while typing. Presenter mode shows only the step loop and the views, in large type. At 390 px nothing scrolls
sideways."""

import pytest

from tests.browser import (
    FOCUS,
    HELD_S,
    LAPTOP,
    NARROW,
    PROJECTOR,
    SHOWN,
    TITLE,
    WAIT_MS,
    button,
    fresh,
    hold_next_stream,
    in_view,
    opened,
    run,
    shot,
    typed_source,
    watch_requests,
)

pytestmark = pytest.mark.slow

TEXT = "Ich habe gestern Abend mit meinem Bruder lange über die Zukunft unserer kleinen Firma gesprochen."  # 15 words
FIGURE_BOX = f"() => {{ const r = ({FOCUS})().getBoundingClientRect(); return {{x: r.x, y: r.y, width: r.width, height: r.height}}; }}"


def loop_in_view(page, viewport: dict) -> dict:
    """Where Step, Show step, the Output (its marked step among it) and the focused head are, and whether each lies
    inside the viewport; the page must not have scrolled."""
    assert page.evaluate("() => [window.scrollX, window.scrollY]") == [0, 0]
    boxes = {
        "Step": button(page, "Step").bounding_box(),
        "Show step": page.get_by_label("Show step").bounding_box(),
        "Output": page.get_by_label("Output").bounding_box(),
        "marked step": page.locator(".steps-tokens .token.current").bounding_box(),
        "focused head": page.evaluate(FIGURE_BOX),
    }
    outside = {name: box for name, box in boxes.items() if not in_view(page, box, viewport)}
    assert not outside, f"out of view at {viewport}: {outside}"
    figure = boxes["focused head"]
    assert figure["width"] >= 300 and figure["height"] >= 200, figure
    return boxes


@pytest.mark.parametrize("viewport", [LAPTOP, PROJECTOR], ids=["1440x900", "1280x720"])
def test_the_step_loop_and_the_focused_head_fit_one_screen_after_a_run_and_each_step(app_page, viewport):
    from playwright.sync_api import expect

    page = app_page
    fresh(page, viewport)
    run(page, TEXT)
    loop_in_view(page, viewport)
    shot(page, f"screen-{viewport['width']}-run", full_page=False)
    button(page, "Reset").click()
    expect(page.get_by_label("Output")).to_have_value("", timeout=WAIT_MS)
    for n in range(1, 4):
        button(page, "Step").click()
        page.wait_for_function(f"() => ({SHOWN})() === {n} && ({FOCUS})()?.data[0]?.y.length === {n}", timeout=WAIT_MS)
        page.settle()
        loop_in_view(page, viewport)
    shot(page, f"screen-{viewport['width']}-step", full_page=False)


def test_inside_a_spaces_iframe_the_loop_fits_and_the_keys_work_after_a_click(served_app, browser):
    url = served_app[0]
    page = browser.new_page(viewport=LAPTOP)
    page.set_content(f"<body style='margin:0'><iframe src='{url}' style='border:0;width:100vw;height:100vh'></iframe>")
    frame = page.frame_locator("iframe")
    app = page.frames[1]
    app.wait_for_function("() => window.attentionLab && window.attentionLab.decoding", timeout=WAIT_MS)
    app.wait_for_timeout(1500)
    for name, locator in (("Step", frame.get_by_role("button", name="Step", exact=True)),
                          ("Show step", frame.get_by_label("Show step")), ("Output", frame.get_by_label("Output"))):  # fmt: skip
        assert in_view(page, locator.bounding_box(), LAPTOP), name
    assert in_view(page, frame.locator("#views .views-focus .js-plotly-plot").bounding_box(), LAPTOP)
    shown = app.evaluate(SHOWN)
    frame.locator(".lab-name").click()  # keys reach the app once it has been clicked (a word there would edit)
    page.keyboard.press("ArrowLeft")
    app.wait_for_function(f"() => ({SHOWN})() === {shown - 1}", timeout=WAIT_MS)
    page.close()


def test_the_keys_move_the_step_the_head_and_the_kind_and_never_while_typing(app_page):
    from playwright.sync_api import expect

    page = app_page
    fresh(page, LAPTOP)
    run(page, TEXT)
    assert "→" in button(page, "Step").get_attribute("title")  # the key hint is a tooltip; the label stays "Step"
    assert button(page, "Run").get_attribute("title") and button(page, "Reset").get_attribute("title")
    n = page.evaluate("() => window.attentionLab.decoding.steps.length")
    last = page.evaluate(SHOWN)
    sent = watch_requests(page)
    for key, shown in (("ArrowLeft", last - 1), ("Home", 0), ("ArrowRight", 1), ("End", n)):
        page.keyboard.press(key)
        page.wait_for_function(f"() => ({SHOWN})() === {shown}", timeout=WAIT_MS)
    expect(page.locator(".now-view")).to_contain_text(f"Step {n} wrote")
    page.keyboard.press("ArrowDown")
    expect(page.get_by_label("Focus head")).to_have_value("Layer 1 · Head 1")
    page.keyboard.press("ArrowUp")
    page.keyboard.press("ArrowUp")
    expect(page.get_by_label("Focus head")).to_have_value("Layer 3 · Head 4")  # round from the mean to the last head
    page.keyboard.press("2")
    page.wait_for_function(f"() => ({TITLE})() === 'Encoder self-attention: layer 3, head 4'", timeout=WAIT_MS)
    page.keyboard.press("3")
    page.wait_for_function(f"() => ({TITLE})().startsWith('Decoder self-attention')", timeout=WAIT_MS)
    page.keyboard.press("1")
    page.keyboard.press("?")
    expect(page.get_by_role("dialog", name="Keys")).to_be_visible()
    page.keyboard.press("Escape")
    expect(page.get_by_role("dialog", name="Keys")).to_be_hidden()
    assert sent == [], f"looking with the keys asked the server: {sent}"  # the step, head, kind: all in the page

    source = page.get_by_label("Source")
    source.click()
    before = (page.evaluate(SHOWN), page.get_by_label("Focus head").input_value(), page.evaluate(TITLE))
    for key in ("ArrowLeft", "Home", "ArrowUp", "2", "?"):
        page.keyboard.press(key)
    page.wait_for_timeout(300)
    assert (page.evaluate(SHOWN), page.get_by_label("Focus head").input_value(), page.evaluate(TITLE)) == before
    assert source.input_value().startswith("2?")  # the keys went to the Source (Home took its caret to its start)
    expect(page.get_by_role("dialog", name="Keys")).to_be_hidden()


def test_right_at_the_last_step_decodes_the_next_as_step_does(app_page):
    from playwright.sync_api import expect

    page = app_page
    fresh(page, LAPTOP)
    typed_source(page, TEXT)
    button(page, "Reset").click()
    expect(page.get_by_label("Output")).to_have_value("", timeout=WAIT_MS)
    button(page, "Step").click()
    page.wait_for_function(f"() => ({SHOWN})() === 1", timeout=WAIT_MS)
    page.settle()
    page.keyboard.press("ArrowRight")  # at the last step decoded: one more, as Step
    page.wait_for_function(f"() => ({SHOWN})() === 2", timeout=WAIT_MS)
    assert len(page.get_by_label("Output").input_value().split()) >= 2


def test_a_step_asked_while_the_last_steps_answer_is_on_its_way_is_kept(app_page, monkeypatch):
    """On the server's road, a Step's stream ends a moment after the Output shows its answer (longer on a loaded
    server: here it is held open). → pressed (or Step clicked) meanwhile is sent once that answer has come whole,
    not dropped."""
    from playwright.sync_api import expect

    page = app_page
    fresh(page, LAPTOP)
    typed_source(page, TEXT)
    button(page, "Reset").click()
    expect(page.get_by_label("Output")).to_have_value("", timeout=WAIT_MS)
    page.settle()  # the Reset's stream has ended: the Step's is the one held
    hold_next_stream(monkeypatch, HELD_S)
    button(page, "Step").click()
    page.wait_for_function(f"() => ({SHOWN})() === 1", timeout=WAIT_MS)  # answered; its stream still open
    page.keyboard.press("ArrowRight")
    page.wait_for_function(f"() => ({SHOWN})() === 2", timeout=WAIT_MS)
    page.settle()
    assert page.evaluate(f"() => ({SHOWN})()") == 2  # one step more, not two
    assert len(page.get_by_label("Output").input_value().split()) >= 2


@pytest.mark.parametrize("how", ["toggle", "address"])
def test_presenter_mode_shows_only_the_step_loop_and_the_views_in_large_type(served_app, browser, how):
    from playwright.sync_api import expect

    url = served_app[0]
    if how == "toggle":
        page = opened(browser, url, PROJECTOR)
        size = page.evaluate(
            "() => parseFloat(getComputedStyle(document.querySelector('#lab-source textarea')).fontSize)"
        )
        button(page, "Presenter mode").click()
        page.wait_for_function("() => location.search.includes('presenter=1')", timeout=WAIT_MS)  # a link keeps it
    else:
        page = opened(browser, url + "?presenter=1", PROJECTOR)
        size = None
    page.wait_for_function("() => document.body.classList.contains('lab-presenter')", timeout=WAIT_MS)
    page.wait_for_timeout(500)
    if size is not None:
        bigger = page.evaluate(
            "() => parseFloat(getComputedStyle(document.querySelector('#lab-source textarea')).fontSize)"
        )
        assert bigger >= 1.2 * size, (size, bigger)
    for hidden in ("Decoding options", "How to read this"):
        expect(page.get_by_text(hidden, exact=True)).to_be_hidden()
    expect(page.locator(".candidates")).to_be_hidden()
    expect(page.get_by_role("tab", name="Heads", exact=True)).to_be_hidden()
    run(page, TEXT)
    loop_in_view(page, PROJECTOR)
    shot(page, f"presenter-{how}", full_page=False)
    if how == "toggle":
        button(page, "Presenter mode").click()
        page.wait_for_function("() => !document.body.classList.contains('lab-presenter')", timeout=WAIT_MS)
        expect(page.get_by_role("tab", name="Heads", exact=True)).to_be_visible()
    page.close()


def test_at_390_px_everything_stacks_and_nothing_scrolls_sideways(app_page):
    page = app_page
    fresh(page, NARROW)
    run(page, TEXT)
    width = "() => document.documentElement.scrollWidth"
    assert page.evaluate(width) <= NARROW["width"]
    model, views = page.get_by_label("Model").bounding_box(), page.evaluate(FIGURE_BOX)
    assert views["y"] > model["y"] and views["x"] >= 0 and views["x"] + views["width"] <= NARROW["width"]
    page.keyboard.press("ArrowLeft")
    page.keyboard.press("2")
    page.wait_for_timeout(500)
    assert page.evaluate(width) <= NARROW["width"]
    shot(page, "screen-390")
