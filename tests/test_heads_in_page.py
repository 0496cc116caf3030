"""The Heads tab's measures made in the page equal the server's: the 20 decodings of tests/test_explain_in_page.py
(greedy, beam, a what-if, heads ablated; both bundled models, a tiny random Marian and a tiny random BART), measured by
heads/in_page.mjs over the copy's ablations graph (page_copy/ablations.py) in Node, against the Heads tab's own server
code for the same tokens and limit: every head's importance (heads/ablation.py importance: each head's mean KL within
1e-4 nats) and Ablate's effects (heads/effects.py effects_data of ablation_effects: the same steps, labels, changes and
top tokens, the KL and probabilities within 1e-4). The graph runs the passes in float32 as the library does, its sums
in another order."""

from __future__ import annotations

from functools import partial

import pytest

from attention_lab.core.units import token_label
from attention_lab.heads.ablation import ablation_effects, importance
from attention_lab.heads.effects import effects_data
from attention_lab.messages import jsonable
from tests.node import needs_node
from tests.test_explain_in_page import ABLATED, SOURCES, decodings, in_page, models  # noqa: F401 - the fixture

pytestmark = [pytest.mark.slow, needs_node]
LIMIT = 12  # the decodings' (test_explain_in_page.decodings)
CLOSE = 1e-4
SLACK = 1e-9  # the difference of two rounded numbers, in floating point (a unit of the 4th decimal apart)


@pytest.mark.parametrize("name", list(SOURCES))
def test_the_pages_head_measures_are_the_servers(models, name, tmp_path):  # noqa: F811 - the fixture, imported
    """Both measures of each decoding, made in one Node run (one load of the runtime and the copy)."""
    pipeline, folder = models[name]
    cases = decodings(pipeline, name)
    heads = [[h.kind, h.layer, h.head] for h in ABLATED]
    asked = {"heads": heads, "limit": LIMIT, "held": "Ablated: three heads."}
    tabs = {"heads/headImportance": {"limit": LIMIT}, "heads/headEffects": asked}
    label = partial(token_label, pipeline.tokenizer, special_ids=pipeline.model.special_ids)
    for i, (case, answer) in enumerate(zip(cases, in_page(folder, cases, tmp_path, tabs), strict=True)):
        where = f"{name} case {i}"
        assert_same_importance(answer["heads/headImportance"], importance(pipeline.model, *of(case), LIMIT), where)
        found = ablation_effects(pipeline.model, *of(case), frozenset(ABLATED), 3, LIMIT)
        server = jsonable(effects_data(found, label, asked["held"]))
        assert_same_effects(answer["heads/headEffects"], server, len(case["tokens"]), where)


def of(case: dict) -> tuple:
    return case["ids"], case["tokens"]


def assert_same_importance(page: dict, server: dict, where: str) -> None:
    assert sorted(page) == sorted(server), f"{where}: {sorted(page)}"
    for kind, grid in server.items():
        assert len(page[kind]) == len(grid) and all(len(row) == grid.shape[1] for row in page[kind])
        for layer, row in enumerate(grid):
            for head, value in enumerate(row):
                got = page[kind][layer][head]
                assert abs(got - value) <= CLOSE, f"{where} {kind} L{layer} H{head}: {got} != {value}"
    assert any(v > 0 for grid in server.values() for v in grid.flat), f"{where}: no head matters"


def assert_same_effects(page: dict, server: dict, steps: int, where: str) -> None:
    assert {k: v for k, v in page.items() if k != "steps"} == {k: v for k, v in server.items() if k != "steps"}
    assert len(page["steps"]) == len(server["steps"]) == steps, where
    for ours, theirs in zip(page["steps"], server["steps"]):
        at = f"{where} step {theirs['step']}"
        same = ("step", "label", "changed")
        assert {k: ours[k] for k in same} == {k: theirs[k] for k in same}, at
        assert abs(ours["kl"] - theirs["kl"]) <= CLOSE + SLACK, f"{at}: KL {ours['kl']} != {theirs['kl']}"
        # the tokens a step cannot write (probability 0: a token forced at the limit) tie, in any order
        written = lambda top: [t[0] for t in top if t[1] > 0]
        assert written(ours["top"]) == written(theirs["top"]), at
        assert all(abs(a[1] - b[1]) <= CLOSE + SLACK for a, b in zip(ours["top"], theirs["top"])), at
    assert any(step["kl"] > 0 for step in server["steps"]), f"{where}: the ablation changes nothing"
