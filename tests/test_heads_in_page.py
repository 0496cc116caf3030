"""The Heads tab's summary made in the page equals the server's: the 20 decodings of tests/test_explain_in_page.py
(greedy, beam, a what-if, heads ablated; both bundled models, a tiny random Marian and a tiny random BART), each
summarised by heads/in_page.mjs `made` in Node (the decoding's weights from the page copy's step graphs, every head's
importance from its ablations graph: page_copy/ablations.py), against the tab's own server code (heads/feature.py:
core/summaries.py head_summaries, heads/ablation.py importance, core/grids.py summary_data) for the same tokens and
limit: the same rows, texts and grids, each value within 1e-4 (a value rounded to 4 places by both, from sums taken in
another order, may land one place apart). The server summarises the decoding without ablations, as the page does.

In the same Node run, Ablate's effects (heads/in_page.mjs `effects`, from the same graph with three heads removed
throughout) against heads/effects.py effects_data of heads/ablation.py ablation_effects, along each decoding: the
same steps, labels, changes and top tokens, the KL and probabilities within 1e-4; with no head ablated, the hint."""

from __future__ import annotations

from functools import partial

import pytest

from attention_lab.core.grids import summary_data
from attention_lab.core.summaries import head_summaries
from attention_lab.core.units import token_label
from attention_lab.heads.ablation import ablation_effects, importance
from attention_lab.heads.effects import NO_EFFECTS, effects_data
from attention_lab.heads.feature import NOTHING, TITLE
from attention_lab.messages import jsonable
from tests.node import needs_node
from tests.test_explain_in_page import ABLATED, SOURCES, decodings, in_page, models  # noqa: F401 - models: the fixture
from transformer import DecodingSession

pytestmark = [pytest.mark.slow, needs_node]
LIMIT = 12  # the decodings' (test_explain_in_page.decodings)
CLOSE = 1e-4 + 1e-9
HELD = "Ablated throughout: three heads (Reset to undo)."  # said as the page's step loop said it
ALIGNMENTS = {"reverse": "reversal"}  # the bundled reversal model's card names it


def server_summary(pipeline, name: str, case: dict) -> dict:
    """The Heads tab's summary of the case's tokens, forced on a decoding without ablations, limited to LIMIT."""
    model = pipeline.model
    session = DecodingSession(model, case["ids"], max_new_tokens=LIMIT)
    for token in case["tokens"]:
        session.step(force=token)
    grid = importance(model, case["ids"], case["tokens"], LIMIT)
    return jsonable(summary_data(head_summaries(session, ALIGNMENTS.get(name)), grid, TITLE))


def assert_same_summary(page: dict, server: dict, what: str) -> None:
    grids = lambda m: [metric.pop("grids") for metric in m["metrics"]]
    ours, theirs = grids(page), grids(server)
    assert page == server, what  # the texts, rows, kinds, layers and heads
    for metric, mine, wanted in zip(server["metrics"], ours, theirs, strict=True):
        for kind, grid in wanted.items():
            assert len(mine[kind]) == len(grid), f"{what} {metric['key']} {kind}"
            for layer, row in enumerate(grid):
                for head, value in enumerate(row):
                    got, where = mine[kind][layer][head], f"{what} {metric['key']} {kind} L{layer + 1} H{head + 1}"
                    assert (got is None) == (value is None), f"{where}: {got} != {value}"
                    assert value is None or abs(got - value) <= CLOSE, f"{where}: {got} != {value}"


@pytest.mark.parametrize("name", list(SOURCES))
def test_the_pages_head_summary_is_the_servers(models, name, tmp_path):  # noqa: F811 - the fixture, imported
    pipeline, folder = models[name]
    cases = decodings(pipeline, name)
    for case in cases:  # Ablate's effects along each decoding (the summary is of the decoding without ablations)
        case.update(ablated=ABLATED, more={"before": {"tokens": case["tokens"]}, "limit": LIMIT, "held": HELD})
    cases.append({"ids": cases[0]["ids"], "tokens": []})
    answers = in_page(folder, cases, tmp_path, {"heads": {"limit": LIMIT}, "heads/effects": {}})
    label = partial(token_label, pipeline.tokenizer, special_ids=pipeline.model.special_ids)
    for i, (case, answer) in enumerate(zip(cases[:-1], answers, strict=False)):
        found = ablation_effects(pipeline.model, case["ids"], case["tokens"], frozenset(ABLATED), 3, LIMIT)
        effects = jsonable(effects_data(found, label, HELD))
        assert_same_effects(answer["heads/effects"], effects, len(case["tokens"]), f"{name} case {i}")
        server = server_summary(pipeline, name, case)
        keys = [metric["key"] for metric in server["metrics"]]
        assert keys == ["entropy", "special", *(["alignment"] if name in ALIGNMENTS else []), "importance"], keys
        importance_row = server["metrics"][-1]["grids"]
        assert any(v for grid in importance_row.values() for row in grid for v in row), f"{name} {i}: no head matters"
        assert_same_summary(answer["heads"], server, f"{name} case {i}")
    assert answers[-1]["heads"] == {"text": NOTHING, "op": "none"}
    assert answers[-1]["heads/effects"] == jsonable(NO_EFFECTS)  # no head ablated: the hint


def assert_same_effects(page: dict, server: dict, steps: int, where: str) -> None:
    assert {k: v for k, v in page.items() if k != "steps"} == {k: v for k, v in server.items() if k != "steps"}
    assert len(page["steps"]) == len(server["steps"]) == steps, where
    for ours, theirs in zip(page["steps"], server["steps"], strict=True):
        at = f"{where} step {theirs['step']}"
        same = ("step", "label", "changed")
        assert {k: ours[k] for k in same} == {k: theirs[k] for k in same}, at
        assert abs(ours["kl"] - theirs["kl"]) <= CLOSE, f"{at}: KL {ours['kl']} != {theirs['kl']}"
        # the tokens a step cannot write (probability 0: a token forced at the limit) tie, in any order
        written = lambda top: [t[0] for t in top if t[1] > 0]
        assert written(ours["top"]) == written(theirs["top"]), at
        assert all(abs(a[1] - b[1]) <= CLOSE for a, b in zip(ours["top"], theirs["top"], strict=True)), at
    assert any(step["kl"] > 0 for step in server["steps"]), f"{where}: the ablation changes nothing"
