"""One name per concept: each tab of the tab table has one word, and its folder (attention_lab/WORD/, where its
feature is defined), its id (Feature.id: a link's ?tab=WORD and gradio's data-tab-id), its section of docs/tabs.md
(the tab's title as the heading, whose anchor is the word, with GitHub's hyphen for an underscore) and, where it has
one, its endpoint (/WORD) all say it. An endpoint named otherwise (a public contract kept: /score, /compare_models) is
named in its tab's section of docs/tabs.md, so that a reader finds which tab it belongs to."""

import re
from pathlib import Path

from attention_lab.feature import Endpoint, Feature
from attention_lab.tabs import TABS
from tests.test_docs import anchors, slug
from tests.test_structure import lab_part

TABS_PAGE = Path(__file__).resolve().parent.parent / "docs" / "tabs.md"


def folder_of(feature: Feature) -> str:
    """Where a feature is defined: the folder of its layout (or view, or wiring)."""
    return lab_part((feature.layout or feature.view or feature.wire).__module__)


def sections(page: Path) -> dict[str, str]:
    """Each `## ` section of a page, by its heading's anchor: its text up to the next one."""
    parts = re.split(r"^## (.+)$", page.read_text(encoding="utf-8"), flags=re.MULTILINE)
    return {slug(heading): body for heading, body in zip(parts[1::2], parts[2::2], strict=True)}


def misnamed(tabs, folders: dict[str, str], documented: dict[str, str], headings: set[str]) -> list[str]:
    """What breaks one name per concept, a line each: `folders` and `documented` (each section's text) by tab id,
    `headings` the anchors of docs/tabs.md."""
    wrong = []
    for tab in tabs:
        word, anchor = tab.id, tab.id.replace("_", "-")
        if folders[word] != word:
            wrong.append(f"the {tab.title} tab's folder is {folders[word]}/, its id {word}")
        if slug(tab.title) != anchor:
            wrong.append(f"the {tab.title} tab's title reads as #{slug(tab.title)}, its id as #{anchor}")
        if anchor not in headings:
            wrong.append(f"docs/tabs.md has no section #{anchor} (## {tab.title})")
        names = [endpoint.name for endpoint in tab.endpoints]
        if names and word not in names:
            unsaid = [name for name in names if f"/{name}" not in documented.get(anchor, "")]
            wrong += [f"/{name} is the {tab.title} tab's, and its section does not say so" for name in unsaid]
    return wrong


def test_each_tabs_folder_id_docs_section_and_endpoint_share_one_word():
    folders = {tab.id: folder_of(tab) for tab in TABS}
    assert misnamed(TABS, folders, sections(TABS_PAGE), anchors(TABS_PAGE)) == []


def test_the_name_check_finds_a_folder_renamed_alone_and_an_endpoint_the_docs_do_not_place():
    folders = {tab.id: folder_of(tab) for tab in TABS}
    renamed = {**folders, "flow": "graph"}  # attention_lab/flow/ moved to attention_lab/graph/, its id still flow
    assert misnamed(TABS, renamed, sections(TABS_PAGE), anchors(TABS_PAGE)) == [
        "the Flow tab's folder is graph/, its id flow"
    ]
    loud = Feature("loud", "Loud", endpoints=(Endpoint("noise", print, str, "", None),))
    assert misnamed((loud,), {"loud": "loud"}, {"loud": "Loud things."}, {"loud"}) == [
        "/noise is the Loud tab's, and its section does not say so"
    ]
    assert misnamed((loud,), {"loud": "loud"}, {}, set()) == [
        "docs/tabs.md has no section #loud (## Loud)",
        "/noise is the Loud tab's, and its section does not say so",
    ]
