"""The Patch tab computed in the page equals the server's: the 20 decodings of tests/test_explain_in_page.py (greedy,
beam, a what-if, heads ablated; both bundled models, a tiny random Marian and a tiny random BART), each corrupted as
the tab asks (a close word swapped in and noise on another, noise alone, a source of another length, the clean
source), patched by patch/in_page.mjs over the copy's patching graph (page_copy/patching.py) in Node, against the
message the tab's own server code makes (patch/feature.py patched) for the same decoding, corruption and limit.

The same tokens, labels, words, hints, changed positions, corrupted output and nulls; the log ps (rounded to 5
decimals) within 1e-4, r (rounded to 4) within 1e-4 and what an error of LOGP in the log ps makes of it: r =
(patched - corrupted) / (clean - corrupted) moves by up to LOGP · 2 (1 + |r|) / |clean - corrupted| (a random
model's r reaches 20 and more). The graph runs each pass in float32 as the library does, in another order: a noisy
corrupted run's log p is seen 7e-5 from the library's (Marian), the errors that move r 5e-6.
"""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from attention_lab.core.units import source_words
from attention_lab.messages import jsonable
from attention_lab.patch.corruption import swapped
from attention_lab.patch.feature import PatchState, patched
from attention_lab.run.state import Run
from tests.node import needs_node
from tests.test_explain_in_page import SOURCES, decodings, in_page, models  # noqa: F401 - models: the fixture
from transformer import DecodingSession, Interventions

pytestmark = [pytest.mark.slow, needs_node]
LIMIT = 12  # the decodings' (test_explain_in_page.decodings)
LOGP = 1e-5  # the log ps' error that r's may come of
CLOSE = 1e-4  # what a number may be from the server's, beyond r's own error
SLACK = 1e-9  # the difference of two rounded numbers, in floating point


def server_message(pipeline, text: str, case: dict, corrupted: str | None, noise: list[int]) -> dict:
    """The Patch message the server's tab makes for the decoding `case` of the source `text`, corrupted as asked."""
    ablated = case.get("ablated")
    held = Interventions(ablate=frozenset(ablated)) if ablated else None
    session = DecodingSession(pipeline.model, case["ids"], max_new_tokens=LIMIT, interventions=held)
    for token in case["tokens"]:
        session.step(force=token)
    run = Run(SimpleNamespace(pipeline=pipeline, name="model"), text, session)
    state = run.states.get(PatchState)
    state.corrupted, state.noise = corrupted, set(noise)
    return jsonable(patched(run, text if corrupted is None else corrupted)())


def assert_same(page, server, where: str, close=lambda value: CLOSE + SLACK) -> None:
    """Equal, but for numbers, which differ by at most close(the server's), a step's r and log p as the module's
    docstring says (a null where the other has one)."""
    if isinstance(server, float) or isinstance(page, float):
        assert isinstance(page, (int, float)) and isinstance(server, (int, float)), f"{where}: {page!r} {server!r}"
        worst = close(server)
        assert abs(page - server) <= worst, f"{where}: {page} in the page, {server} (at most {worst:.1e} apart)"
    elif isinstance(server, dict) and "clean_logp" in server:  # a step
        assert isinstance(page, dict) and sorted(page) == sorted(server), f"{where}: {sorted(page)} {sorted(server)}"
        gap = abs(server["clean_logp"] - server["corrupted_logp"])  # at least 0.1 where r is not null
        for key in server:
            if key.endswith("logp"):
                assert_same(page[key], server[key], f"{where}.{key}")
            else:
                r = lambda value: CLOSE + SLACK + LOGP * 2 * (1 + abs(value)) / max(gap, 0.1)
                assert_same(page[key], server[key], f"{where}.{key}", r)
    elif isinstance(server, dict):
        assert isinstance(page, dict) and sorted(page) == sorted(server), f"{where}: {sorted(page)} {sorted(server)}"
        for key in server:
            assert_same(page[key], server[key], f"{where}.{key}", close)
    elif isinstance(server, list):
        assert isinstance(page, list) and len(page) == len(server), f"{where}: {page!r} {server!r}"
        for i, (a, b) in enumerate(zip(page, server)):
            assert_same(a, b, f"{where}[{i}]", close)
    else:
        assert page == server, f"{where}: {page!r} in the page, {server!r} on the server"


def corruptions(pipeline, name: str) -> list[tuple[list[int], dict]]:
    """What the tab is asked of each source's decodings (by their indices): the first source with a close word swapped
    in for its second and noise on its last, the second with noise on its second word alone; then the first source
    typed back as it is and the second as a new run starts
    (nothing to restore), and a source of another length (a hint)."""
    first, second = SOURCES[name]
    ids = pipeline.tokenizer.encode(first)
    close = swapped(pipeline, ids, 1) or first  # a model with no close word: noise alone
    last = len(source_words(pipeline, ids)) - 1
    return [
        ([0, 2, 3], {"text": first, "corrupted": close, "noise": [last]}),
        ([1, 4], {"text": second, "corrupted": None, "noise": [1]}),
        ([0], {"text": first, "corrupted": first, "noise": []}),
        ([1], {"text": second, "corrupted": None, "noise": []}),  # as a new run starts: the clean source
        ([1], {"text": second, "corrupted": first + " " + first, "noise": []}),
    ]


@pytest.mark.parametrize("name", list(SOURCES))
def test_the_pages_patch_messages_are_the_servers(models, name, tmp_path):  # noqa: F811 - the fixture, imported
    pipeline, folder = models[name]
    cases = decodings(pipeline, name)
    chosen = [(i, asked) for which, asked in corruptions(pipeline, name) for i in which]
    tabs = [{"patch": {"corrupted": a["corrupted"], "noise": a["noise"], "limit": LIMIT}} for _, a in chosen]
    answers = in_page(folder, [cases[i] for i, _ in chosen], tmp_path, tabs)  # in one Node process
    assert len(answers) == len(chosen)
    patched_steps = 0
    for (i, asked), answer in zip(chosen, answers):
        server = server_message(pipeline, asked["text"], cases[i], asked["corrupted"], asked["noise"])
        assert_same(answer["patch"], server, f"{name} case {i}, {asked}")
        patched_steps += len(server["steps"])
    assert patched_steps >= 5 * 3  # every decoding of the first two corruptions was patched, step by step
