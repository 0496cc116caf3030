"""The contribution graph (transformer.flow): its defining properties (the edges into each node add up to 1; the
routes from the source add up to ALTI+'s source share, /score's own), pruning checked against its definition, the
known answer of reversal (the heaviest route from the source starts at the mirror position), transformers models
through the adapter, and /flow's answers and messages."""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

import pytest
import torch

from attention_lab.checks import InputError
from attention_lab.core.payload import SCALE
from attention_lab.core.units import token_label
from attention_lab.decoding.messages import Key
from attention_lab.feature import Shared
from attention_lab.flow.api import ENDPOINTS
from attention_lab.flow.messages import flow_message
from attention_lab.messages import jsonable
from attention_lab.request import Request
from attention_lab.trust.score import score
from tests import hf_models
from tests.node import needs_node, run_modules
from tests.test_contributions import no_cross, tiny
from training.reversal import reversal_pairs
from transformer import bundled, greedy_decode, hooks, load_pretrained
from transformer.contributions import Mixing, alti_plus, sublayer_contributions
from transformer.flow import DECODER, ENCODER, PREDICTION, Graph, flow, shares, split_attention, split_ffn

SENTENCE = "Bitte schließen Sie das Fenster, wenn es draußen regnet."


@pytest.fixture(scope="module")
def reverse():
    return load_pretrained(str(bundled("reverse")))


@pytest.fixture(scope="module")
def de_en():
    return load_pretrained(str(bundled("de-en")))


def decoded(pipeline, text: str, limit: int | None = None) -> tuple[list[int], list[int]]:
    src_ids = pipeline.tokenizer.encode(text)
    return src_ids, greedy_decode(pipeline.model, torch.tensor([src_ids]), max_new_tokens=limit)[0]


def check_graph(graph: Graph, src_len: int, step: int, layers: tuple[int, int]) -> None:
    """Every node but the embeddings takes edges that add up to 1; no edge goes down; the node count is the
    streams' (the embeddings and one per sublayer, for each position), and the prediction's."""
    into: dict[str, float] = {}
    for edge in graph.edges:
        into[edge.target] = into.get(edge.target, 0.0) + edge.weight
        assert edge.weight >= 0
    order = {node.id: i for i, node in enumerate(graph.nodes)}
    assert all(order[e.source] < order[e.target] for e in graph.edges)
    for node in graph.nodes:
        if node.layer == 0:
            assert node.id not in into
        else:
            assert into[node.id] == pytest.approx(1.0, abs=1e-5), node
    Le, Ld = layers
    assert len(graph.nodes) == src_len * (1 + 2 * Le) + step * (1 + 3 * Ld) + 1
    assert graph.nodes[-1].id == PREDICTION and graph.nodes[-1].position == step - 1


def check_against_alti(model, src_ids, tokens, interventions=None) -> None:
    found = flow(model, src_ids, tokens, interventions)
    alti = alti_plus(model, src_ids, tokens, interventions)
    layers = (model.config.n_encoder_layers, model.config.n_decoder_layers)
    for step in range(1, len(tokens) + 1):
        graph = found.graph(step)
        check_graph(graph, len(src_ids), step, layers)
        reach = graph.reach()
        source = [reach[f"{ENCODER}.0.embed.{j}"] for j in range(len(src_ids))]
        prefix = [reach[f"{DECODER}.0.embed.{i}"] for i in range(step)]
        assert source == pytest.approx(alti.source[step - 1].tolist(), abs=1e-5)
        assert prefix == pytest.approx(alti.prefix[step - 1, :step].tolist(), abs=1e-5)
        assert graph.source_total() == pytest.approx(float(alti.source_share[step - 1]), abs=1e-5)


def test_shares_of_a_term_by_hand():
    # the term (2, 1) of the parts (2, 0) and (0, 1): ||y|| = 3; ||y - (2, 0)|| = 1 and ||y - (0, 1)|| = 2: 2/3, 1/3
    assert shares(torch.tensor([[2.0, 0.0], [0.0, 1.0]], dtype=torch.float64)).tolist() == pytest.approx([2 / 3, 1 / 3])
    # two opposite parts: (1, 0) and (-1, 0) sum to 0, and neither is closer to it than nothing: equal shares
    assert shares(torch.tensor([[1.0, 0.0], [-1.0, 0.0]], dtype=torch.float64)).tolist() == [0.5, 0.5]


def test_a_feed_forward_block_shares_its_node_with_the_residual_by_closeness(reverse):
    # the stream (2, 0) and the block's output (0, 1): 2/3 of the node through the residual, 1/3 through the block
    split = split_ffn(torch.tensor([[[2.0, 0.0]]]), torch.tensor([[[0.0, 1.0]]]), centred=False)
    assert split.residual.tolist() == pytest.approx([2 / 3]) and split.heads.flatten().tolist() == pytest.approx(
        [1 / 3]
    )
    # every block's output zeroed in the forward pass: each block adds nothing, and its edge weighs nothing
    src_ids, tokens = decoded(reverse, "abcdef")
    with hooks.using([(lambda name: name.endswith("hook_ff_out"), lambda x, at: torch.zeros_like(x))]):
        graph = flow(reverse.model, src_ids, tokens).graph(3)
    blocks = [e for e in graph.edges if e.kind == "ffn"]
    assert blocks and all(e.weight == 0 for e in blocks)
    unzeroed = [e.weight for e in flow(reverse.model, src_ids, tokens).graph(3).edges if e.kind == "ffn"]
    assert min(unzeroed) > 0.05


@pytest.mark.parametrize("norm_first", [False, True])
def test_a_sublayers_heads_add_up_to_alti_plus_per_key(norm_first):
    """Split over heads, each key's edges (and the residual, for the query's own key) add up to ALTI+'s contribution
    of that key, post-LN and pre-LN."""
    model = tiny(norm_first)
    src_ids, tokens = [3, 4, 5, 6, 2], [7, 8, 9, 2]
    mixing = Mixing()
    with torch.no_grad(), mixing.reading(model):
        enc = model.encode(torch.tensor([src_ids]))
        model.decode(torch.tensor([[1, *tokens[:-1]]]), enc.memory, enc.src_mask)
    for kind, cross in (("encoder", False), ("decoder_self", False), ("cross", True)):
        sublayer = mixing.sublayers[(kind, 0)]
        keys, split = sublayer_contributions(sublayer, cross).float(), split_attention(sublayer, cross)
        per_key = split.heads.sum(dim=1)  # (Q, K)
        if cross:
            assert torch.allclose(split.residual, keys[:, 0], atol=1e-6)
            assert torch.allclose(per_key, keys[:, 1:], atol=1e-6)
        else:
            own = torch.arange(keys.size(0))
            per_key[own, own] += split.residual
            assert torch.allclose(per_key, keys, atol=1e-6), kind
        assert (split.heads >= 0).all() and (split.residual >= 0).all()


@pytest.mark.parametrize("norm_first", [False, True])
def test_a_window_of_query_rows_is_those_rows_of_the_whole_sublayer(norm_first):
    """Sublayer.window(first): each sublayer's contributions and edges for the query rows from `first` on are those
    rows of the whole call's (the own key of a self-attention row is its position, not its row), post-LN and pre-LN;
    what the page's flow graph computes a Step's rows with (attention_lab/page_copy/flow.py)."""
    model = tiny(norm_first)
    mixing = Mixing()
    with torch.no_grad(), mixing.reading(model):
        enc = model.encode(torch.tensor([[3, 4, 5, 6, 2]]))
        model.decode(torch.tensor([[1, 7, 8, 9]]), enc.memory, enc.src_mask)
    for kind, cross in (("encoder", False), ("decoder_self", False), ("cross", True)):
        whole = mixing.sublayers[(kind, 0)]
        for first in (1, 3):
            part = whole.window(first)
            assert torch.allclose(sublayer_contributions(part, cross), sublayer_contributions(whole, cross)[first:])
            ours, theirs = split_attention(part, cross), split_attention(whole, cross)
            assert torch.allclose(ours.residual, theirs.residual[first:], atol=1e-7), (kind, first)
            assert torch.allclose(ours.heads, theirs.heads[first:], atol=1e-7), (kind, first)


@pytest.mark.parametrize("norm_first", [False, True])
def test_the_graph_adds_up_and_its_routes_are_alti_plus(norm_first):
    model = tiny(norm_first)
    check_against_alti(model, [3, 4, 5, 6, 2], [7, 8, 9, 10, 2])


def test_the_bundled_models_routes_are_alti_plus_and_scores(reverse, de_en):
    """On both bundled models: every step's graph adds up, its routes from each source token are ALTI+'s
    contributions, and their total is /score's source share (the same output, scored with ALTI+)."""
    for pipeline, text in ((reverse, "hello42world"), (de_en, SENTENCE)):
        src_ids, tokens = decoded(pipeline, text)
        check_against_alti(pipeline.model, src_ids, tokens)
        scored = score(pipeline, src_ids, tokens, "alti")
        found = flow(pipeline.model, src_ids, tokens)
        for step in scored.steps:
            assert found.graph(step.step).source_total() == pytest.approx(step.source_share, abs=1e-5)


def test_ablated_cross_heads_leave_no_route_from_the_source(reverse):
    src_ids, tokens = decoded(reverse, "abcdef")
    blind = no_cross(reverse.model.config)
    found = flow(reverse.model, src_ids, tokens, blind)
    for step in range(1, len(tokens) + 1):
        graph = found.graph(step)
        assert graph.source_total() == 0
        assert all(e.weight == 0 for e in graph.edges if e.target.startswith("decoder") and ".cross." in e.target
                   and e.kind == "head")  # fmt: skip


def pruned_by_definition(graph: Graph, threshold: float) -> tuple[set, set]:
    """Pruning worked out otherwise: repeat until nothing changes, keep an edge of weight >= threshold into a kept
    node and the node it comes from."""
    nodes, edges = {PREDICTION}, set()
    while True:
        more = {e for e in graph.edges if e.weight >= threshold and e.target in nodes}
        grown = nodes | {e.source for e in more}
        if more == edges and grown == nodes:
            return nodes, edges
        nodes, edges = grown, more


def test_pruning_keeps_what_reaches_the_prediction(de_en):
    src_ids, tokens = decoded(de_en, SENTENCE)
    found = flow(de_en.model, src_ids, tokens)
    whole = found.graph(4)
    same = whole.pruned(0)
    assert same.nodes == whole.nodes and same.edges == whole.edges  # threshold 0: the whole graph, unpruned
    for threshold in (0.01, 0.04, 0.2):
        kept = whole.pruned(threshold)
        nodes, edges = pruned_by_definition(whole, threshold)
        assert {n.id for n in kept.nodes} == nodes and set(kept.edges) == edges
        reach = kept.reach()
        assert all(reach[n.id] > 0 for n in kept.nodes)  # every node kept leads to the prediction
    assert len(whole.pruned(0.2).edges) < len(whole.pruned(0.04).edges) < len(whole.edges)


@pytest.mark.slow
def test_reversal_the_heaviest_route_from_the_source_starts_at_the_mirror_position(reverse):
    """Step t (1-based) of a string of n characters copies character n - t: the route from the source whose
    product is largest must start there at >= 90% of the steps that copy (all of them, 1,461 steps of 200 strings,
    when this was written: RESULTS.md's figure; the test draws 100)."""
    hits = steps = 0
    for text, _ in reversal_pairs(100, min_len=3, max_len=12, seed=5):
        src_ids, tokens = decoded(reverse, text)
        found = flow(reverse.model, src_ids, tokens)
        n = len(src_ids) - 1  # the end token is last
        for step in range(1, min(len(tokens), n) + 1):
            route, weight = found.graph(step).heaviest_route(ENCODER)
            steps += 1
            hits += route[0].source == f"{ENCODER}.0.embed.{n - step}" and weight > 0
    assert steps > 500 and hits / steps >= 0.9, f"{hits} of {steps}"


@pytest.mark.slow
@pytest.mark.parametrize("family", sorted(hf_models.FAMILIES))
def test_a_transformers_models_graph_adds_up_to_alti_plus(family, tmp_path_factory):
    pipeline = hf_models.loaded(family, tmp_path_factory)
    src_ids, tokens = decoded(pipeline, "ein kleiner Test hier", limit=6)
    check_against_alti(pipeline.model, src_ids, tokens)


@needs_node
def test_the_page_cuts_and_prunes_each_steps_graph_as_the_library_does(de_en):
    """flow/graph.mjs, given the Flow tab's message (the whole decoding's edges at or above its floor), keeps at
    each step and threshold the edges the library's own pruning keeps, and the same routes' totals."""
    src_ids, tokens = decoded(de_en, SENTENCE)
    found = flow(de_en.model, src_ids, tokens)
    message = flow_message(Key(1, 1), de_en, found)
    thresholds = [0.01, 0.04, 0.15]
    body = """
      const out = [];
      for (let step = 1; step <= data.message.tokens.length; step++) {
        for (const threshold of data.thresholds) {
          const kept = graph.prune(graph.stepGraph(data.message, step), threshold), reached = graph.reach(kept);
          const source = kept.nodes.filter((n) => n.side === 0 && n.level === 0).map((n) => reached.get(n.id));
          out.push([kept.nodes.length, kept.edges.length, source.reduce((a, b) => a + b, 0)]);
        }
      }
      return out;"""
    drawn = run_modules({"graph": "flow/graph.mjs"}, body, {"message": message, "thresholds": thresholds})
    expected = []
    for step in range(1, len(tokens) + 1):
        whole = found.graph(step)  # its weights as the page gets them: 16-bit integers
        whole.edges = [replace(e, weight=round(e.weight * SCALE) / SCALE) for e in whole.edges]
        for threshold in thresholds:
            kept = whole.pruned(threshold)
            expected.append([len(kept.nodes), len(kept.edges), kept.source_total()])
    assert [row[:2] for row in drawn] == [row[:2] for row in expected]
    assert [row[2] for row in drawn] == pytest.approx([row[2] for row in expected], abs=1e-6)


def test_the_library_pages_example_gives_what_it_says():
    text = (Path(__file__).resolve().parent.parent / "docs" / "library.md").read_text(encoding="utf-8")
    block = next(b for b in re.findall(r"```python\n(.*?)```", text, flags=re.DOTALL) if "heaviest_route(" in b)
    namespace: dict = {}
    exec(compile(block, "docs/library.md", "exec"), namespace)  # noqa: S102 - the page's own example
    route, weight, graph = namespace["route"], namespace["weight"], namespace["graph"]
    assert route[0].source == f"{ENCODER}.0.embed.4" and round(weight, 3) == 0.022
    assert [(e.layer, e.head) for e in route if e.kind == "head"] == [(2, 3)] and route[-2].kind == "ffn"
    assert (round(graph.source_total(), 3), len(graph.edges), len(graph.pruned(0.04).edges)) == (0.817, 587, 63)


@pytest.fixture(scope="module")
def request_for(bundled):
    return Request(ENDPOINTS[0], Shared(bundled))


def test_the_flow_endpoint_answers_the_documented_shape(request_for, de_en):
    answer = jsonable(ENDPOINTS[0].fn(request_for, "de-en", SENTENCE, 3))
    assert set(answer) == {"step", "threshold", "nodes", "edges"} and answer["threshold"] == 0.04
    assert set(answer["nodes"][0]) == {"id", "side", "layer", "sublayer", "position", "label"}
    assert set(answer["edges"][0]) == {"from", "to", "kind", "layer", "head", "weight"}
    ids = {n["id"] for n in answer["nodes"]}
    assert all(e["from"] in ids and e["to"] in ids and e["weight"] >= 0.04 for e in answer["edges"])
    prediction = answer["nodes"][-1]
    src_ids, tokens = decoded(de_en, SENTENCE)
    assert prediction == {"id": "prediction", "side": "prediction", "layer": None, "sublayer": None, "position": 2,
                          "label": token_label(de_en.tokenizer, tokens[2])}  # fmt: skip
    heads = [e for e in answer["edges"] if e["kind"] == "head"]
    assert heads and all(1 <= e["head"] <= 4 and 1 <= e["layer"] <= 3 for e in heads)
    whole = jsonable(ENDPOINTS[0].fn(request_for, "de-en", SENTENCE, 3, 0))
    assert len(whole["nodes"]) == len(src_ids) * 7 + 3 * 10 + 1  # unpruned: every stream of the step
    assert len(whole["edges"]) > len(answer["edges"])


@pytest.mark.parametrize(
    ("step", "threshold", "message"),
    [
        (0, 0.04, "Step must be a whole number from 1 to"),
        (99, 0.04, "Step must be a whole number from 1 to"),
        ("two", 0.04, "Step must be a whole number"),
        (1, -0.1, "The threshold must be a number from 0 to 1"),
        (1, "x", "The threshold must be a number from 0 to 1"),
        (1, 2, "The threshold must be a number from 0 to 1"),
    ],
)
def test_a_bad_step_or_threshold_gets_one_line(request_for, step, threshold, message):
    with pytest.raises(InputError, match=message) as caught:
        ENDPOINTS[0].fn(request_for, "reverse", "abc", step, threshold)
    assert "\n" not in str(caught.value)
