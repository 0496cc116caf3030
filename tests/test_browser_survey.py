"""In Chromium: the Survey tab shows the bundled model's survey over the corpus, and a click on one of its cells
focuses that head, at 1400 and 390 px."""

import pytest

from attention_lab.models.examples import first_example
from tests.browser import MEASURES, NARROW, WAIT_MS, WIDE, fresh, open_tab, run, summary_cell

pytestmark = pytest.mark.slow

SURVEY = "#survey-view"

# Every title, note, name and cell's value of the Heads and Survey tabs' summaries that is cut short, and each
# summary wider than its box
CUT = """() => [...document.querySelectorAll('#heads-summary .summary, #survey-view .summary')].flatMap(box => [box,
  ...box.querySelectorAll('.summary-title, .summary-note, .summary-kind, .summary-head, .summary-layer, .summary-cell')])
  .filter(e => e.scrollWidth > e.clientWidth + 1).map(e => [e.className, e.textContent, e.clientWidth])"""


@pytest.mark.parametrize("viewport", [WIDE, NARROW], ids=["1400px", "390px"])
def test_the_survey_tab_shows_the_corpus_survey_and_a_click_focuses_its_head(served_app, app_page, viewport):
    from playwright.sync_api import expect

    page = app_page
    fresh(page, viewport)  # the module's shared page (conftest.py), as a newly opened one shows it
    run(page, first_example(served_app[1], "de-en"))
    open_tab(page, "Survey")
    page.wait_for_function(f"() => ({MEASURES})({SURVEY!r}).length >= 4")
    page.settle()
    title = page.locator(f"{SURVEY} .summary-title").inner_text()
    assert "over 1002 sentences (BLEU 11.01): de-en" in title  # checkpoints/de-en/survey.json
    names = page.evaluate(MEASURES, SURVEY)
    assert names == ["entropy (nats)", "weight on special tokens", "offset of the top weight", "BLEU lost when ablated"]
    expect(page.get_by_text("Over the corpus", exact=True)).to_be_visible()
    assert page.evaluate(CUT) == [], "text cut short at the summary's edge"
    page.locator("#survey-view").scroll_into_view_if_needed()
    page.wait_for_timeout(300)
    summary_cell(page, SURVEY, 3, "cross|Layer 3 · Head 4").click()  # BLEU lost: the most needed head
    expect(page.get_by_label("Focus head")).to_have_value("Layer 3 · Head 4", timeout=WAIT_MS)
    expect(page.locator(".views-kind[data-kind=cross]")).to_have_attribute("aria-pressed", "true")
    assert page.evaluate("() => document.documentElement.scrollWidth") <= viewport["width"]
