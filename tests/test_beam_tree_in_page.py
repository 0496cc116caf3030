"""The Beam tree tab's tree made in the page (beam_tree/in_page.mjs: the page's own beam search, decoding/beams.mjs,
recording every continuation it weighed, decoding/search_tree.mjs) equals the server's (beam_tree/messages.py
page_tree of the library's recorded search, transformer/beam_tree.py): for both bundled models, a tiny random Marian
and BART, each source of tests/test_explain_in_page.py's decodings searched with beam sizes 1, 4 and 8, and one with
heads ablated: the same nodes in the same order (parents, steps, tokens, labels, states), the same best node and
text; each log p and total within 1e-4 (both round to 5 places, from log-softmaxes taken by other kernels) and, for
the random transformers models, RANDOM_ULPS float32 eps of its size."""

from __future__ import annotations

import math

import pytest

from attention_lab.beam_tree.messages import page_tree, search_tree
from attention_lab.messages import jsonable
from attention_lab.models.registry import ModelEntry
from attention_lab.run.state import Run
from tests.node import needs_node
from tests.test_explain_in_page import SOURCES, decodings, in_page, models  # noqa: F401 - models: the fixture
from tests.tolerance import EPS
from transformer import DecodingSession, Interventions

pytestmark = [pytest.mark.slow, needs_node]
LIMIT = 12  # the decodings' (test_explain_in_page.decodings)
CLOSE = 1e-4 + 1e-9
RANDOM_ULPS = {"marian": 2500, "bart": 2500}
ASKED = [(0, 4), (1, 1), (1, 8), (4, 4)]  # (which of the five decodings: its source and ablated heads, beam size)


def server_tree(name: str, pipeline, case: dict, beam: int, serial: int) -> dict:
    ablated = case.get("ablated")
    held = Interventions(ablate=frozenset(ablated)) if ablated else None
    session = DecodingSession(pipeline.model, case["ids"], max_new_tokens=LIMIT, interventions=held)
    run = Run(ModelEntry(name, pipeline), "", session, serial=serial)
    return jsonable(page_tree(run, *search_tree(session, pipeline.tokenizer, beam), beam))


@pytest.mark.parametrize("name", list(SOURCES))
def test_the_pages_beam_tree_is_the_servers(models, name, tmp_path):  # noqa: F811 - the fixture, imported
    pipeline, folder = models[name]
    chosen = decodings(pipeline, name)
    cases = [{**chosen[i], "more": {"limit": LIMIT}} for i, _ in ASKED]
    answers = in_page(folder, cases, tmp_path, [{"beam_tree": {"beam": beam}} for _, beam in ASKED])
    pruned = 0
    for n, ((i, beam), case, answer) in enumerate(zip(ASKED, cases, answers, strict=True)):
        where, ours, theirs = (
            f"{name} decoding {i} beam {beam}",
            answer["beam_tree"],
            server_tree(name, pipeline, case, beam, n),
        )
        numbers = {key: (ours.pop(key), theirs.pop(key)) for key in ("logp", "total")}
        assert ours == theirs, where  # the nodes, their order, states, labels, the best node and its text
        for key, (mine, wanted) in numbers.items():
            close = [CLOSE + RANDOM_ULPS.get(name, 0) * EPS * abs(v) for v in wanted]
            wrong = [
                (j, a, b)
                for j, (a, b, c) in enumerate(zip(mine, wanted, close, strict=True))
                if not math.isclose(a, b, abs_tol=c)
            ]
            assert not wrong, f"{where} {key}: {wrong[:3]}"
        pruned += theirs["state"].count("p")
    assert pruned > 0, f"{name}: no search pruned anything"
