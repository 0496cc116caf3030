"""The explanation tabs computed in the page equal the server's: 20 decodings (greedy, beam, a what-if, heads
ablated; both bundled models, a tiny random Marian and a tiny random BART) explained by the page's modules over the
copy's explanations' graph (page_copy/analyses.py) in Node, on the runtime the page carries
(tests/js/explain_in_page.mjs), against the message each tab's server code makes for the same decoding.

Flow: the same tokens, labels, layers, floor and edges (the same nodes joined, in the same order, the same kind and
head), weights within one step of their 16-bit rounding (1.5e-5). The graph itself against the library, output by
output, is in tests/test_live.py.
"""

from __future__ import annotations

import base64
import json
import subprocess
from pathlib import Path

import numpy as np
import pytest
import torch

from attention_lab.checks import check_source
from attention_lab.decoding.messages import Key
from attention_lab.flow.messages import EDGE, flow_message
from attention_lab.messages import jsonable
from attention_lab.page.frame import in_page as in_page_tabs
from attention_lab.tabs import TABS
from tests.node import needs_node, node
from transformer import DecodingSession, Head, Interventions
from transformer.beams import beam_search
from transformer.contributions import computed_in
from transformer.flow import flow

pytestmark = [pytest.mark.slow, needs_node]
RUNNER = Path(__file__).resolve().parent / "js" / "explain_in_page.mjs"
SOURCES = {
    "de-en": ["Die Kinder spielen im Garten.", "Ich habe heute keine Zeit, aber morgen komme ich gern."],
    "reverse": ["abcdefgh", "helloworld42"],
    "marian": ["Wo ist der Bahnhof ?", "Kinder spielen im Garten heute"],
    "bart": ["Ich habe Hunger .", "Er liest ein Buch über Katzen"],
}
# The page computes the readings in float32 (page_copy/readings.py). The tiny random Marian is made with large
# weights, and its ALTI in float32 is float64's only within 0.04 (differences of large sums): its page is held to the
# library's own readings in float32, and within ILL_CONDITIONED steps of 1/65535 (onnxruntime's float32 sums in
# another order than torch's: 43 measured); every other model's to the server's, in float64, within one step.
FLOAT32_ONLY = {"marian"}
ILL_CONDITIONED = 100
ABLATED = (Head("cross", 0, 1), Head("encoder", 0, 0), Head("decoder_self", 1, 1))


@pytest.fixture
def models(explained_models):
    """Each model's pipeline and its page copy's folder (float32; conftest.py explained_models)."""
    return explained_models


def decodings(pipeline, name: str) -> list[dict]:
    """Five decodings of the model: two greedy, a beam search's best, a what-if, and one with heads ablated."""
    model, limit = pipeline.model, 12
    first, second = (check_source(pipeline, text)[0] for text in SOURCES[name])
    greedy = lambda ids, iv=None: DecodingSession(model, ids, max_new_tokens=limit, interventions=iv).run()
    with torch.no_grad():
        beam = beam_search(model, torch.tensor([first]), 4, limit)[0].tokens
    session = DecodingSession(model, first, max_new_tokens=limit)
    session.step()
    session.step()  # the what-if at step 2 (a model may force its first token)
    other = next(t for t in session.steps[-1].top_ids if t != session.steps[-1].token and session.can_write(t, 2))
    session.back()
    session.step(force=other)
    ablated = Interventions(ablate=frozenset(ABLATED))
    return [
        {"ids": first, "tokens": greedy(first)},
        {"ids": second, "tokens": greedy(second)},
        {"ids": first, "tokens": beam + [model.config.eos_id] if len(beam) < limit else beam},
        {"ids": first, "tokens": session.run()},
        {"ids": second, "tokens": greedy(second, ablated), "ablated": ABLATED},
    ]


def in_page(
    folder: Path, cases: list[dict], tmp_path: Path, tabs: dict | list[dict], copies: dict[str, Path] | None = None
) -> list[dict]:
    """What the page makes for each decoding of `cases` ({ids, tokens, ablated: Heads, more: what else the run holds};
    its key is {serial: its index, version: 0}) on each tab of `tabs` (tab id -> what the tab is asked: its own controls), by tab. `tabs`
    may be a list, each case's own: one Node process then answers what several would (each loads the runtime and
    the copy). `copies`: other models' copies by name, which the page can load beside it (Two models' side B)."""
    request = tmp_path / "request.json"
    asked = tabs if isinstance(tabs, list) else [tabs] * len(cases)
    wire = [
        {
            "ids": case["ids"],
            "tokens": case["tokens"],
            "ablated": [[h.kind, h.layer, h.head] for h in case.get("ablated", ())],
            "key": {"serial": i, "version": 0},
            "tabs": tabs_of_case,
            "more": case.get("more", {}),
        }
        for i, (case, tabs_of_case) in enumerate(zip(cases, asked, strict=True))
    ]
    others = {name: str(path) for name, path in (copies or {}).items()}
    request.write_text(
        json.dumps({"here": jsonable(in_page_tabs(TABS)), "cases": wire, "copies": others}), encoding="utf-8"
    )
    done = subprocess.run(
        node(str(RUNNER), str(folder), str(request)), capture_output=True, text=True, timeout=600, check=False
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def edges(message: dict) -> np.ndarray:
    return np.frombuffer(base64.b64decode(message["edges"]), dtype=EDGE)


def assert_same_flow(page: dict, server: dict, what: str, steps: int = 1) -> None:
    plain = lambda m: {k: v for k, v in m.items() if k != "edges"}
    assert plain(page) == plain(server), what
    ours, theirs = edges(page), edges(server)
    for field in ("to", "source", "kind", "head"):
        assert np.array_equal(ours[field], theirs[field]), f"{what}: {field}"
    worst = np.abs(ours["weight"].astype(int) - theirs["weight"].astype(int)).max(initial=0)
    assert worst <= steps, f"{what}: an edge's weight differs by {worst} / 65535"


@pytest.mark.parametrize("name", list(SOURCES))
def test_the_pages_explanations_are_the_servers(models, name, tmp_path):
    """The five decodings, then the second one a Step at a time (the page computes a Step's rows alone and keeps the
    rows before it: flow/in_page.mjs rowsOf), then its first two steps with the heads ablated. The tiny random
    Marian's steps are left out: its float32 readings are ill-conditioned (see FLOAT32_ONLY), and a row computed
    alone sums in another order than in the whole pass (three equal-share edges of 0.014 sent by one and not the
    other)."""
    pipeline, folder = models[name]
    cases = decodings(pipeline, name)
    second, ablated = cases[1], cases[4]
    if name not in FLOAT32_ONLY:
        cases += [{"ids": second["ids"], "tokens": second["tokens"][:n]} for n in range(1, len(second["tokens"]) + 1)]
        cases += [{**ablated, "tokens": ablated["tokens"][:n]} for n in (1, 2)]
    answers = in_page(folder, cases, tmp_path, {"flow": {}})
    assert len(answers) == len(cases) >= 5
    for i, (case, answer) in enumerate(zip(cases, answers)):
        what = f"{name} case {i} ({len(case['tokens'])} tokens)"
        ablated = case.get("ablated")
        interventions = Interventions(ablate=frozenset(ablated)) if ablated else None
        with computed_in(torch.float32 if name in FLOAT32_ONLY else torch.float64):
            found = flow(pipeline.model, case["ids"], case["tokens"], interventions)
        server = jsonable(flow_message(Key(i, 0), pipeline, found))
        assert_same_flow(answer["flow"], server, what, ILL_CONDITIONED if name in FLOAT32_ONLY else 1)
