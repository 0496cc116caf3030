"""In Chromium: the Survey tab shows the bundled model's survey over the corpus, and a click on one of its cells
focuses that head, at 1400 and 390 px."""

import pytest

from attention_lab.models.examples import first_example
from tests.browser import NARROW, WAIT_MS, WIDE, fresh, open_tab, run

pytestmark = pytest.mark.slow

SURVEY = "() => document.querySelector('#survey-view .js-plotly-plot')"
# The centre of the survey grid's cell: metric row `trace`, kind block `block`, layer and head (0-based).
CELL_CENTRE = f"""([trace, block, layer, head]) => {{
  const gd = ({SURVEY})(), full = gd._fullLayout, box = gd.getBoundingClientRect();
  const perBlock = (gd.data[0].z[0].length + 1) / 3;
  const yaxis = full[trace === 0 ? 'yaxis' : 'yaxis' + (trace + 1)];
  return [box.left + full.xaxis._offset + full.xaxis.l2p(block * perBlock + head),
          box.top + yaxis._offset + yaxis.l2p(layer)];
}}"""

# Every title, note and label of the Heads and Survey tabs' figures, and the figure it lies outside of, if any.
CUT = """() => [...document.querySelectorAll('#heads-summary .js-plotly-plot, #survey-view .js-plotly-plot')]
  .flatMap(gd => { const box = gd.getBoundingClientRect();
    return [...gd.querySelectorAll('.annotation, .gtitle, .xtick, .ytick')].map(t => t.getBoundingClientRect())
      .filter(r => r.width && (r.left < box.left - 1 || r.right > box.right + 1 || r.top < box.top - 1))
      .map(r => [gd.parentElement.closest('[id]').id, r.left, r.right, box.right]); })"""


@pytest.mark.parametrize("viewport", [WIDE, NARROW], ids=["1400px", "390px"])
def test_the_survey_tab_shows_the_corpus_survey_and_a_click_focuses_its_head(served_app, app_page, viewport):
    from playwright.sync_api import expect

    page = app_page
    fresh(page, viewport)  # the module's shared page (conftest.py), as a newly opened one shows it
    run(page, first_example(served_app[1], "de-en"))
    open_tab(page, "Survey")
    page.wait_for_function(f"() => {{ const gd = ({SURVEY})(); return gd && gd.data && gd.data.length >= 4; }}")
    page.settle()
    title = page.evaluate(f"() => ({SURVEY})().layout.annotations.find(a => a.name === 'title').text")
    title = title.replace("<br>", " ")  # wrapped to the figure's width
    assert "over 1002 sentences (BLEU 11.01): de-en" in title  # checkpoints/de-en/survey.json
    names = page.evaluate(f"() => ({SURVEY})().data.map(t => t.hovertemplate.split('<br>')[1].split(':')[0])")
    assert names == ["entropy (nats)", "weight on special tokens", "offset of the top weight", "BLEU lost when ablated"]
    expect(page.get_by_text("Over the corpus", exact=True)).to_be_visible()
    assert page.evaluate(CUT) == [], "text cut off at a figure's edge"
    page.locator("#survey-view").scroll_into_view_if_needed()
    page.wait_for_timeout(300)
    x, y = page.evaluate(CELL_CENTRE, [3, 2, 2, 3])  # BLEU lost, cross, layer 3, head 4: the most needed head
    page.mouse.click(x, y)
    expect(page.get_by_label("Focus head")).to_have_value("Layer 3 · Head 4", timeout=WAIT_MS)
    expect(page.locator(".views-kind[data-kind=cross]")).to_have_attribute("aria-pressed", "true")
    assert page.evaluate("() => document.documentElement.scrollWidth") <= viewport["width"]
