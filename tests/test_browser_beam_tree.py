"""In Chromium: the Beam tree tab draws the search; a click on a node draws that hypothesis's attention, equal to the
/attention export of a decoding forced to its prefix; "Decode on from here" makes it the decoding and Back undoes
it; a long sentence pans rather than shrinks, and the tab fits 1440, 1280 and 390 px."""

from __future__ import annotations

import pytest

from tests.browser import LAPTOP, NARROW, PROJECTOR, WAIT_MS, button, fresh, open_tab, run, shot

pytestmark = pytest.mark.slow

TREE = "() => document.querySelector('#beam-tree .js-plotly-plot')"
HYPOTHESIS = "() => document.querySelector('#beam-hypothesis .views-focus .js-plotly-plot')"
# Where a node of the tree is on the screen: the trace named `name`, its `i`-th point
WHERE = f"""([name, i]) => {{
  const gd = ({TREE})(), full = gd._fullLayout, trace = gd.data.find((t) => t.name === name);
  const box = gd.getBoundingClientRect(), xa = full.xaxis, ya = full.yaxis;
  return {{x: box.left + xa._offset + xa.l2p(trace.x[i]), y: box.top + ya._offset + ya.l2p(trace.y[i]),
    id: trace.customdata[i][1], step: trace.x[i]}};
}}"""
RANGE = f"() => ({TREE})()._fullLayout.xaxis.range"


def tree_opened(page, viewport: dict, model: str, text: str):
    """The module's shared page (conftest.py: app_page) at this screen size, on the Beam tree tab after a Run of
    `text` (a tree of an earlier run is not drawn again)."""
    fresh(page, viewport, model)
    run(page, text)
    open_tab(page, "Beam tree")
    page.wait_for_function(f"() => {{ const gd = ({TREE})(); return gd && gd.data.length > 3; }}", timeout=WAIT_MS)
    page.settle()
    return page


def visible_node(page, name: str, step: int) -> dict:
    """The first node of trace `name` at `step` that is inside the drawn figure."""
    count = page.evaluate(f"() => ({TREE})().data.find((t) => t.name === {name!r}).x.length")
    for i in range(count):
        at = page.evaluate(WHERE, [name, i])
        if at["step"] == step:
            return at
    raise AssertionError(f"no {name} node at step {step}")


def test_a_clicked_nodes_attention_is_the_export_of_its_prefix_and_decoding_on_is_undone_by_back(served_app, app_page):
    from playwright.sync_api import expect

    from attention_lab.app import endpoints, make_lab
    from attention_lab.core.attention_export import attention_record
    from attention_lab.messages import jsonable
    from attention_lab.run.state import new_run

    _, registry, _ = served_app
    text = "hello42world"
    page = tree_opened(app_page, LAPTOP, "reverse", text)
    greedy = page.get_by_label("Output").input_value()
    open_tab(page, "Attention")
    page.get_by_label("Focus head").select_option("Layer 2 · Head 3")  # the hypothesis is drawn with this head
    open_tab(page, "Beam tree")
    node = visible_node(page, "pruned", 3)
    page.mouse.click(node["x"], node["y"])
    expect(page.locator("#beam-hypothesis .beam-hypothesis-line")).to_contain_text("at step 3", timeout=WAIT_MS)
    page.wait_for_function(f"() => ({HYPOTHESIS})() && ({HYPOTHESIS})().data.length", timeout=WAIT_MS)
    drawn = page.evaluate(f"() => {{ const gd = ({HYPOTHESIS})(); return [gd.data[0].y, gd.data[0].customdata]; }}")
    prefix = [label.replace("\u200b", "") for label in drawn[0]]
    assert len(prefix) == 3 and "".join(prefix) != greedy[:3]  # a pruned branch: another prefix than the output's
    entry = registry.entry("reverse")
    tokenizer = entry.pipeline.tokenizer
    forced = new_run(entry, text)
    for token in prefix:
        forced.session.step(force=tokenizer.encode(token)[0])
    export = jsonable(attention_record(forced.session, tokenizer, "reverse"))
    for step, row in enumerate(drawn[1]):  # the focused head (layer 2, head 3) at each step of the hypothesis
        assert row == pytest.approx(export["steps"][step]["cross"][1][2], abs=1.5e-4)
    assert page.get_by_label("Output").input_value() == greedy  # a click shows it; the decoding stays
    button(page, "Decode on from here, greedily").click()
    expected = endpoints(make_lab(registry))("continue", "reverse", text, prefix)["output_text"]
    expect(page.get_by_label("Output")).to_have_value(expected, timeout=WAIT_MS)
    expect(page.get_by_label("Before the branch from the tree")).to_have_value(greedy)
    button(page, "Back").click()
    expect(page.get_by_label("Output")).to_have_value(greedy, timeout=WAIT_MS)
    shot(page, "beam-tree-1440")


@pytest.mark.parametrize("viewport", [LAPTOP, PROJECTOR, NARROW], ids=["1440px", "1280px", "390px"])
def test_a_long_sentence_pans_rather_than_shrinks_and_the_tab_fits(app_page, viewport):
    text = "Ich habe gestern Abend mit meinem Bruder lange über die Zukunft gesprochen."
    page = tree_opened(app_page, viewport, "de-en", text)
    steps = page.evaluate(f"() => Math.max(...({TREE})().data.flatMap((t) => t.x.filter((x) => x !== null)))")
    first = page.evaluate(RANGE)
    assert steps >= 15 and first[0] < 0 and first[1] < steps  # it opens on the first steps, at a readable size
    assert (first[1] - first[0]) * 60 <= viewport["width"]  # at least 60 px a step
    drag = page.locator("#beam-tree .js-plotly-plot .nsewdrag").first
    drag.scroll_into_view_if_needed()
    box = drag.bounding_box()
    middle = (box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    page.mouse.move(*middle)
    page.mouse.down()
    page.mouse.move(middle[0] - box["width"] / 2, middle[1], steps=8)
    page.mouse.up()
    panned = page.evaluate(RANGE)
    assert panned[0] > first[0] + 1 and panned[1] - panned[0] == pytest.approx(first[1] - first[0])
    width = page.evaluate("() => document.documentElement.scrollWidth")
    assert width <= viewport["width"] + 1, width  # nothing wider than the screen
    shot(page, f"beam-tree-long-{viewport['width']}")
