"""In Chromium, every tab in sight: at a laptop's 1440×900, a projector's 1280×720 and a phone's 390 px, each tab of
the tab table is a visible tab of the row (role tab, in the page's width), none behind a "more" menu, so that one tap
opens it; each stays a tab for assistive technology (aria-selected, the tabpanel it controls). A link opens the lab
on a tab (?tab=ID, each tab of the table), and on a model and a source decoded (?tab=&model=&source=); the address
then follows the tab and the model, the page's link has the source too, and a link that asks for what is not here says
so in one line."""

import pytest

from attention_lab.tabs import TABS
from tests.browser import LAPTOP, NARROW, PROJECTOR, WAIT_MS, fresh, opening, ready, run, shot

pytestmark = pytest.mark.slow

ROW = """() => [...document.querySelectorAll('#lab-tabs button[role=tab]')].map(b => {
  const r = b.getBoundingClientRect();
  return {id: b.dataset.tabId, left: r.left, right: r.right, width: r.width, height: r.height,
          selected: b.getAttribute('aria-selected'), controls: b.getAttribute('aria-controls')};
})"""
MENU = "() => document.querySelectorAll('#lab-tabs .overflow-menu, #lab-tabs .overflow-dropdown').length"
SELECTED = "() => document.querySelector('#lab-tabs button[role=tab][aria-selected=true]')?.dataset.tabId"


def row_in_sight(page) -> list[dict]:
    """Each tab of the row, and that it is in sight: drawn, inside the page's width, with no menu of tabs."""
    row = page.evaluate(ROW)
    width = page.evaluate("() => document.documentElement.clientWidth")
    hidden = [tab["id"] for tab in row if tab["width"] == 0 or tab["left"] < 0 or tab["right"] > width + 0.5]
    assert not hidden, f"tabs out of sight at {width} px: {hidden}"
    assert page.evaluate(MENU) == 0 and page.get_by_role("button", name="More tabs").count() == 0
    return row


@pytest.mark.parametrize("viewport", [LAPTOP, PROJECTOR, NARROW], ids=["1440x900", "1280x720", "390"])
def test_every_tab_of_the_table_is_in_sight_and_a_tab(app_page, viewport):
    page = app_page
    fresh(page, viewport)
    row = row_in_sight(page)
    assert [tab["id"] for tab in row] == [tab.id for tab in TABS]  # the table's tabs, in its order
    # what assistive technology reads: tabs, one selected, and the panel it controls (gradio lays out a tab's panel
    # when it is first opened)
    assert [tab["selected"] for tab in row] == ["true", *["false"] * (len(row) - 1)]
    assert all(tab["controls"] == f"tab-{tab['id']}" for tab in row)
    last = TABS[-1].id
    page.locator(f"#lab-tabs button[data-tab-id={last}]").click()  # one tap, from where the tabs are
    page.wait_for_function(f"() => ({SELECTED})() === {last!r}", timeout=WAIT_MS)
    assert page.locator(f"[role=tabpanel]#tab-{last}").is_visible()
    shot(page, f"tabs-{viewport['width']}", full_page=False)


def test_a_link_opens_each_tab_of_the_table(app_page):
    """?tab=ID, for every tab of the table, followed in one page as a page opened on it follows it (a new page for
    each costs seconds of gradio's start-up; the next test opens one)."""
    page = app_page
    fresh(page, LAPTOP)
    for tab in reversed(TABS):  # the first is open already
        page.evaluate(f"() => window.attentionLabAddress.go('?tab={tab.id}')")
        page.wait_for_function(f"() => ({SELECTED})() === {tab.id!r}", timeout=WAIT_MS)
        assert page.locator(f"[role=tabpanel]#tab-{tab.id}").is_visible()


def test_a_link_opens_a_tab_with_a_model_and_a_source_decoded_and_the_address_follows(served_app, browser):
    from playwright.sync_api import expect

    page = ready(opening(browser, f"{served_app[0]}?tab=flow&model=reverse&source=abcd"))
    expect(page.get_by_label("Output")).to_have_value("dcba", timeout=WAIT_MS)
    assert page.get_by_label("Model").input_value() == "reverse"
    page.wait_for_function(f"() => ({SELECTED})() === 'flow'", timeout=WAIT_MS)
    page.locator("#lab-tabs button[data-tab-id=why]").click()
    page.wait_for_function("() => new URL(location.href).searchParams.get('tab') === 'why'", timeout=WAIT_MS)
    address = page.evaluate("() => Object.fromEntries(new URL(location.href).searchParams)")
    assert address == {"road": "server", "tab": "why", "model": "reverse", "source": "abcd"}  # still the link's
    run(page, "xyz1")  # another source: the address drops the link's (it keeps no source of its own) ...
    page.wait_for_function("() => !new URL(location.href).searchParams.has('source')", timeout=WAIT_MS)
    link = page.evaluate("() => Object.fromEntries(new URL(window.attentionLabAddress.link()).searchParams)")
    assert link == {"road": "server", "tab": "why", "model": "reverse", "source": "xyz1"}  # ... the link has it


def test_a_link_to_what_is_not_here_says_so_in_one_line_and_opens_the_rest(served_app, browser):
    from playwright.sync_api import expect

    page = ready(opening(browser, f"{served_app[0]}?tab=nowhere&model=no-such-model&source=Ich+habe+Hunger."))
    problem = page.locator("#lab-address .lab-address-problem")
    expect(problem).to_have_count(1, timeout=WAIT_MS)
    assert "No tab “nowhere”" in problem.inner_text() and "No model “no-such-model”" in problem.inner_text()
    expect(page.get_by_label("Source")).to_have_value("Ich habe Hunger.", timeout=WAIT_MS)
    expect(page.get_by_label("Output")).not_to_have_value("", timeout=WAIT_MS)
