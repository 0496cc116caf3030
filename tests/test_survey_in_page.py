"""The Survey tab's grid shown in the page (survey/corpus.mjs: the page copy's corpus.json, survey/feature.py
PAGE_FILE) is the one the server sends for the survey saved beside each bundled model (survey/feature.py `corpus`),
read in Node as the page reads it."""

from __future__ import annotations

import json

import pytest

from attention_lab.messages import jsonable
from attention_lab.survey.feature import PAGE_FILE, ChosenSurveys, corpus, survey_path
from tests.node import needs_node
from tests.test_explain_in_page import in_page

pytestmark = [pytest.mark.slow, needs_node]


@pytest.mark.parametrize("name", ["de-en", "reverse"])
def test_the_pages_survey_is_the_servers(bundled, bundled_copies, name, tmp_path):
    entry = bundled.entries[name]
    config = json.loads((bundled_copies[name] / "config.json").read_text(encoding="utf-8"))
    assert PAGE_FILE in config["files"]
    case = {"ids": entry.pipeline.tokenizer.encode("abc"), "tokens": []}
    (answer,) = in_page(bundled_copies[name], [case], tmp_path, {"survey": {}})
    theirs = jsonable(corpus(entry, survey_path(entry, ChosenSurveys())))
    assert theirs["op"] == "summary" and answer["survey"] == theirs
