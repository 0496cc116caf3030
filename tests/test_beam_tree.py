"""The beam search recorded as a tree (transformer.beam_tree): it searches exactly as before, its best node's path is
the output, totals add up along every path, and each step keeps at most beam size hypotheses."""

from __future__ import annotations

import pytest
import torch

import attention_lab.adapters  # noqa: F401 - transformers models load through load_pretrained
from tests import hf_models
from transformer import beam_search, bundled, load_pretrained
from transformer.beam_tree import FINISHED, KEPT, PRUNED

CASES = [
    ("reverse", "hello42world"),
    ("reverse", "abcdefghijklmnopqrstuvwxyz0123456789"),  # beyond the lengths it was trained on: a wider search
    ("de-en", "Der kleine Hund schläft heute im Garten hinter dem Haus."),
    ("de-en", "Ich muss den Rasen mähen."),
]


@pytest.fixture(scope="module")
def pipelines(tmp_path_factory):
    loaded = {name: load_pretrained(str(bundled(name))) for name in ("reverse", "de-en")}
    loaded["marian"] = hf_models.loaded("marian", tmp_path_factory)
    return loaded


def check(pipeline, text: str, k: int, forced_last: bool = False, limit: int | None = 24) -> None:
    """`forced_last`: the model forces its end token at the limit, where a hypothesis has one continuation only."""
    model, eos = pipeline.model, pipeline.model.config.eos_id
    src = torch.tensor([pipeline.tokenizer.encode(text)])
    plain = beam_search(model, src, k, max_new_tokens=limit)[0]
    recorded = beam_search(model, src, k, max_new_tokens=limit, record_tree=True)[0]
    tree = recorded.tree
    assert (recorded.tokens, recorded.score) == (plain.tokens, plain.score)  # recording changes nothing
    assert tree.path(tree.best) in (plain.tokens, [*plain.tokens, eos])  # ends with eos unless cut at the limit
    root = tree.nodes[0]
    assert (root.parent, root.step, root.total, root.token) == (None, 0, 0.0, model.config.bos_id)
    children: dict[int, list] = {}
    for node in tree.nodes[1:]:
        parent = tree.nodes[node.parent]
        assert node.total == parent.total + node.logp and node.step == parent.step + 1
        assert parent.state == KEPT and node.logp <= 0
        assert node.state in (KEPT, PRUNED, FINISHED) and (node.state != FINISHED or node.token == eos)
        children.setdefault(node.parent, []).append(node)
    for step in {n.step for n in tree.nodes}:
        assert sum(n.state == KEPT for n in tree.nodes if n.step == step) <= k
    for parent, nodes in children.items():  # each live hypothesis shows at least its k most probable tokens
        assert len({n.token for n in nodes}) == len(nodes)
        assert len(nodes) >= k or (forced_last and nodes[0].step == limit), (parent, len(nodes))
    best = tree.nodes[tree.best]
    assert best.state == (FINISHED if best.token == eos else KEPT)


@pytest.mark.parametrize(("name", "text"), CASES)
@pytest.mark.parametrize("k", [1, 4])
def test_the_recorded_search_is_the_search(pipelines, name, text, k):
    check(pipelines[name], text, k)


def test_a_transformers_models_search_is_recorded_too(pipelines):
    check(pipelines["marian"], "ein kleiner Test hier", 3, forced_last=True)


def test_a_pruned_hypothesis_is_never_extended(pipelines):
    pipeline = pipelines["de-en"]
    src = torch.tensor([pipeline.tokenizer.encode("Ich muss den Rasen mähen.")])
    tree = beam_search(pipeline.model, src, 4, record_tree=True)[0].tree
    parents = {n.parent for n in tree.nodes[1:]}
    assert not any(tree.nodes[p].state != KEPT for p in parents)
    assert sum(n.state == PRUNED for n in tree.nodes) > 0 and sum(n.state == FINISHED for n in tree.nodes) >= 4


def test_a_hypothesis_kept_after_its_end_token_finished_has_its_node(pipelines):
    """At beam size 1, when the end token is the most probable, the hypothesis finishes and the second most
    probable token is kept: a continuation outside the beam size most probable that the tree must still hold (here
    the search goes on past three such finishes)."""
    check(pipelines["de-en"], "Ich muss den Rasen mähen.", 1, limit=None)


@pytest.fixture(scope="module")
def api(bundled):
    from attention_lab.app import endpoints, make_lab

    return endpoints(make_lab(bundled))


@pytest.mark.parametrize("model", ["reverse", "de-en"])
@pytest.mark.parametrize("k", [1, 4, 8])
def test_the_best_node_is_the_apps_beam_output(api, model, k):
    text = {"reverse": "hello42world", "de-en": "Der kleine Hund schläft heute im Garten hinter dem Haus."}[model]
    tree = api.beam_tree(model, text, k)
    nodes = {n["id"]: n for n in tree["nodes"]}
    path, node = [], nodes[tree["best"]]
    while node["parent"] is not None:
        assert node["total"] == nodes[node["parent"]]["total"] + node["logp"]
        path.append(node["token"])
        node = nodes[node["parent"]]
    assert (node["step"], node["total"]) == (0, 0.0)
    assert path[::-1] == api.attention(model, text, "beam", k)["output_tokens"]
    assert tree["output_text"] == api.translate(model, text, "beam", k)


@pytest.mark.parametrize("model", ["reverse", "de-en"])
def test_continuing_from_the_first_k_greedy_tokens_gives_the_greedy_output(api, model):
    text = {"reverse": "hello42world", "de-en": "Ich muss den Rasen mähen."}[model]
    greedy = api.attention(model, text)["output_tokens"]
    for n in (0, 1, len(greedy) // 2, len(greedy)):
        assert api("continue", model, text, greedy[:n])["output_tokens"] == greedy
    beam = api.attention(model, text, "beam", 4)["output_tokens"]
    assert api("continue", model, text, [], "beam", 4)["output_tokens"] == beam


def test_continuing_from_a_prefix_the_search_preferred_writes_that_prefix_then_decodes_on(api, bundled):
    """Where beam search and greedy decoding part (the 12-word sentence: "I spoke…" against "I was…"), /continue
    forces the beam's first tokens and decodes on greedily from them, and by beam search it is the library's search
    from that prefix."""
    text = "Ich habe gestern Abend mit meinem Bruder lange über die Zukunft gesprochen."
    greedy = api.attention("de-en", text)["output_tokens"]
    beam = api.attention("de-en", text, "beam", 4)["output_tokens"]
    prefix = beam[:3]
    assert prefix != greedy[:3]
    on = api("continue", "de-en", text, prefix)["output_tokens"]
    assert on[:3] == prefix and on != greedy and on[-1] == "</s>"
    pipeline = bundled.entry("de-en").pipeline
    ids = [pipeline.tokenizer.token_to_id(t) for t in prefix]
    src = torch.tensor([pipeline.tokenizer.encode(text)])
    searched = beam_search(pipeline.model, src, 3, 256, prefix=ids)[0].tokens
    by_beam = api("continue", "de-en", text, prefix, "beam", 3)["output_tokens"]
    assert by_beam == pipeline.tokenizer.tokens([*searched, pipeline.model.config.eos_id]) and by_beam != on


def test_bad_beam_sizes_and_prefixes_get_one_line(api):
    from attention_lab.checks import InputError

    for bad in (0, 17, "x"):
        with pytest.raises(InputError, match="Beam size must be a whole number from 1 to 16"):
            api.beam_tree("reverse", "abc", bad)
    with pytest.raises(InputError, match="Unknown token 'zz' in the prefix"):
        api("continue", "reverse", "abc", ["c", "zz"])
    with pytest.raises(InputError, match="The prefix must be a list of tokens"):
        api("continue", "reverse", "abc", "cba")
