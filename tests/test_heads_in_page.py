"""Every head's importance measured in the page equals the server's: the 20 decodings of tests/test_explain_in_page.py
(greedy, beam, a what-if, heads ablated; both bundled models, a tiny random Marian and a tiny random BART), measured by
heads/in_page.mjs headImportance over the copy's ablations graph (page_copy/ablations.py) in Node, against the Heads
tab's own server code (heads/ablation.py importance) for the same tokens and limit: each head's mean KL within 1e-4
(nats; the graph runs the passes in float32 as the library does, its sums in another order)."""

from __future__ import annotations

import pytest

from attention_lab.heads.ablation import importance
from tests.node import needs_node
from tests.test_explain_in_page import SOURCES, decodings, in_page, models  # noqa: F401 - models: the fixture

pytestmark = [pytest.mark.slow, needs_node]
LIMIT = 12  # the decodings' (test_explain_in_page.decodings)
CLOSE = 1e-4


@pytest.mark.parametrize("name", list(SOURCES))
def test_the_pages_head_importance_is_the_servers(models, name, tmp_path):  # noqa: F811 - the fixture, imported
    pipeline, folder = models[name]
    cases = decodings(pipeline, name)
    answers = in_page(folder, cases, tmp_path, {"heads/headImportance": {"limit": LIMIT}})
    for i, (case, answer) in enumerate(zip(cases, answers, strict=True)):
        server = importance(pipeline.model, case["ids"], case["tokens"], LIMIT)
        page = answer["heads/headImportance"]
        assert sorted(page) == sorted(server), f"{name} case {i}: {sorted(page)}"
        for kind, grid in server.items():
            assert len(page[kind]) == len(grid) and all(len(row) == grid.shape[1] for row in page[kind])
            for layer, row in enumerate(grid):
                for head, value in enumerate(row):
                    got = page[kind][layer][head]
                    assert abs(got - value) <= CLOSE, f"{name} case {i} {kind} L{layer} H{head}: {got} != {value}"
        assert any(v > 0 for grid in server.values() for v in grid.flat), f"{name} case {i}: no head matters"
