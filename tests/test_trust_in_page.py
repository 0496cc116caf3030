"""The Trust tab's message made in the page (trust/in_page.mjs over the copy's readings' graph, run in Node by
tests/js/explain_in_page.mjs) equals the server's (trust/feature.py scored_message) for the same decoding: 20
decodings (greedy, beam, a what-if, heads ablated; both bundled models, a tiny random Marian and a tiny random BART)
scored by ALTI+ as they stand, under the decodings' limit; and a pasted translation where the page tokenizes the
target side as the server does (our models), the server's refusal included. The texts, labels, flags and nulls are
the same; the numbers within 1e-4 (the graph runs in ONNX Runtime, the server in torch). The page leaves the
attribution methods, and a transformers model's pasted translation, to the server (null)."""

from __future__ import annotations

import math

import pytest

from attention_lab.messages import jsonable
from attention_lab.models.registry import ModelEntry
from attention_lab.run.state import Run
from attention_lab.trust.feature import scored_message
from tests import test_explain_in_page as explained
from tests.node import needs_node
from tests.test_explain_in_page import SOURCES, decodings, in_page
from transformer import DecodingSession, Interventions

pytestmark = [pytest.mark.slow, needs_node]
models = explained.models  # the fixture: each model's pipeline and its page copy's folder
LIMIT = 12  # the decodings' (test_explain_in_page.decodings)
CLOSE = 1e-4
PASTED = {"de-en": ["The children are playing in the garden.", "word " * 130], "reverse": ["hgfedcb", "HGF"]}


def run_of(name: str, pipeline, case: dict) -> Run:
    """The run of the decoding `case` ({ids, tokens, ablated}) as the server holds it: its tokens forced in a session
    of at most LIMIT steps, with the heads ablated."""
    ablated = case.get("ablated")
    held = Interventions(ablate=frozenset(ablated)) if ablated else None
    session = DecodingSession(pipeline.model, case["ids"], max_new_tokens=LIMIT, interventions=held)
    for token in case["tokens"]:
        session.step(force=token)
    return Run(ModelEntry(name, pipeline), "", session)


def server(name: str, pipeline, case: dict, pasted: str | None = None) -> dict:
    return jsonable(scored_message(run_of(name, pipeline, case), pasted, "alti")())


def assert_same(page, theirs, where: str = "") -> None:
    """`page` equals `theirs`: the same keys, texts and nulls; numbers within CLOSE."""
    if isinstance(theirs, dict):
        assert isinstance(page, dict) and sorted(page) == sorted(theirs), f"{where}: {sorted(page)} != {sorted(theirs)}"
        for key in theirs:
            assert_same(page[key], theirs[key], f"{where}.{key}")
    elif isinstance(theirs, list):
        assert isinstance(page, list) and len(page) == len(theirs), f"{where}: {page} != {theirs}"
        for i, (ours, other) in enumerate(zip(page, theirs)):
            assert_same(ours, other, f"{where}[{i}]")
    elif isinstance(theirs, (int, float)) and not isinstance(theirs, bool):
        assert isinstance(page, (int, float)) and math.isclose(page, theirs, abs_tol=CLOSE), (
            f"{where}: {page} != {theirs}"
        )
    else:
        assert page == theirs, f"{where}: {page!r} != {theirs!r}"


@pytest.mark.parametrize("name", list(SOURCES))
def test_the_pages_trust_message_is_the_servers(models, name, tmp_path):
    pipeline, folder = models[name]
    cases = decodings(pipeline, name)
    answers = in_page(folder, cases, tmp_path, {"trust": {"method": "alti", "pasted": None, "limit": LIMIT}})
    assert len(answers) == len(cases) == 5
    for i, (case, answer) in enumerate(zip(cases, answers)):
        theirs = server(name, pipeline, case)
        assert theirs["steps"] and ("held" in theirs) == bool(case.get("ablated"))
        assert_same(answer["trust"], theirs, f"{name} case {i}")
    wass = theirs["sentence"]["wass_to_data"]
    assert all(v is not None for v in wass) if name == "de-en" else all(v is None for v in wass)


@pytest.mark.parametrize("name", list(PASTED))
def test_a_pasted_translation_is_scored_in_the_page_as_on_the_server(models, name, tmp_path):
    pipeline, folder = models[name]
    case = decodings(pipeline, name)[4]  # heads ablated: a pasted translation is scored without
    asked = [{"trust": {"method": "alti", "pasted": text, "limit": LIMIT}} for text in PASTED[name]]
    answers = in_page(folder, [case] * len(asked), tmp_path, asked)  # every text's, in one Node process
    for text, answer in zip(PASTED[name], answers, strict=True):
        assert_same(answer["trust"], server(name, pipeline, case, text), f"{name} {text[:20]!r}")
    assert "hint" in answer["trust"]  # the last of each: refused, with the server's words


def test_the_attribution_methods_and_a_transformers_models_pasted_translation_are_the_servers(models, tmp_path):
    pipeline, folder = models["marian"]
    case = decodings(pipeline, "marian")[0]
    assert in_page(folder, [case], tmp_path, {"trust": {"method": "alti", "pasted": "Wo ist"}}) == [{"trust": None}]
    pipeline, folder = models["reverse"]
    case = decodings(pipeline, "reverse")[0]
    assert in_page(folder, [case], tmp_path, {"trust": {"method": "input_x_gradient"}}) == [{"trust": None}]
