"""In Chromium: the Patch tab corrupts a source word with a click, draws the shown step's grids of r on a scale centred
on 0, follows Show step and the keys with no request, and a click on a cell draws that part's r at every step; it
fits 1400 and 390 px."""

from __future__ import annotations

import pytest

from tests.browser import NARROW, WAIT_MS, WIDE, fresh, open_tab, run, shot, watch_requests

pytestmark = pytest.mark.slow

SOURCE = "abcdef"
LINE = "() => document.querySelector('#patch-view .patch-summary')?.innerText || ''"
GRID = "() => document.querySelector('#patch-view .patch-states > div .js-plotly-plot')"  # the encoder's states


def says(page, text: str) -> None:
    page.wait_for_function(f"() => ({LINE})().includes({text!r})", timeout=WAIT_MS)


@pytest.mark.parametrize("viewport", [WIDE, NARROW], ids=["1400px", "390px"])
def test_a_click_corrupts_a_word_and_the_grids_follow_the_shown_step(app_page, viewport):
    from playwright.sync_api import expect

    page = app_page
    fresh(page, viewport, "reverse")  # waits for the model's own example to be decoded, before the Run of SOURCE
    run(page, SOURCE)
    open_tab(page, "Patch")
    expect(page.get_by_label("Corrupted")).to_have_value(SOURCE, timeout=WAIT_MS)
    for label in ("Source", "Output"):  # the step loop's boxes, as scripts find them, with the tab's controls drawn
        assert page.get_by_label(label).count() == 1, label
    expect(page.locator("#patch-view .patch-summary")).to_contain_text("is the clean one", timeout=WAIT_MS)
    page.locator("#patch-view .patch-words .word").nth(3).click()  # "d": noise on it
    expect(page.locator("#patch-view .patch-words .word.noisy")).to_have_text("d", timeout=WAIT_MS)
    page.keyboard.press("End")
    says(page, "Step 7")
    page.settle()
    sent = watch_requests(page)
    page.locator("#patch-view .patch-summary").click()  # nothing that takes keys focused: the keys move the step
    page.keyboard.press("Home")
    for _ in range(3):
        page.keyboard.press("ArrowRight")
    says(page, "Step 3")  # writes "d", read from source position 4
    says(page, "source position 4 (“d”)")
    z = page.evaluate(f"() => ({GRID})().data[0]")
    assert (z["zmin"], z["zmid"], z["zmax"]) == (-1, 0, 1) and "1: fully restored" in z["colorbar"]["ticktext"]
    last = z["z"][-1]  # after the last encoder layer: position 4 restores it all, and most
    assert last[3] >= 0.9 and all(r < last[3] for j, r in enumerate(last) if j != 3 and r is not None)
    page.keyboard.press("ArrowLeft")
    says(page, "nothing to restore")  # step 2 writes "e": the noise on "d" does not change it
    assert sent == [], f"the Patch tab asked the server: {sent}"
    page.keyboard.press("ArrowRight")
    says(page, "Step 3")
    page.locator("#patch-view .patch-states").scroll_into_view_if_needed()
    box = page.evaluate(
        f"() => {{ const r = ({GRID})().querySelector('.nsewdrag').getBoundingClientRect(); "
        "return [r.x, r.y, r.width, r.height]; }"
    )
    columns, layers = len(z["z"][0]), len(z["z"])
    page.mouse.click(box[0] + box[2] * 3.5 / columns, box[1] + box[3] * (layers - 0.5) / layers)
    trace = "() => document.querySelector('#patch-view .patch-trace .js-plotly-plot')"
    page.wait_for_function(f"() => !!({trace})()", timeout=WAIT_MS)
    ys = page.evaluate(f"() => ({trace})().data[0].y")
    assert len(ys) == 7 and ys[2] >= 0.9 and sum(y is not None for y in ys) == 1  # only step 3 has a change
    shot(page, f"patch-{viewport['width']}")
    assert page.evaluate("() => document.documentElement.scrollWidth") <= viewport["width"]
