"""The Beam tree tab through the Lab (as the page's events drive it): the tree it sends is /beam_tree's search; a
clicked node's attention is the /attention export of a decoding forced to its prefix; decoding on from a node gives
/continue's output and becomes the run's decoding, which the next Back undoes; and the page's tree layout (tree.mjs,
in Node) draws every node once, folds pruned branches into marks that count them, and ranks finished hypotheses as
transformer.decoding does."""

from __future__ import annotations

import numpy as np
import pytest

from attention_lab.app import endpoints, make_lab
from attention_lab.beam_tree import feature as tree_tab
from attention_lab.beam_tree.feature import decode_on, pick
from attention_lab.beam_tree.messages import tree_record
from attention_lab.checks import InputError
from attention_lab.controls import Controls
from attention_lab.core.attention_export import attention_record
from attention_lab.messages import jsonable
from attention_lab.models.registry import load_models
from attention_lab.run.state import UserState, loop, new_run
from tests.node import needs_node, run_modules
from transformer.decoding import length_normalise

SLOW = next(output.slow for output in tree_tab.OUTPUTS if output.name == "tree")
DE = "Ich habe gestern Abend mit meinem Bruder lange über die Zukunft gesprochen."


@pytest.fixture(scope="module")
def registry():
    return load_models([])


@pytest.fixture(scope="module")
def lab(registry):
    return make_lab(registry)


@pytest.fixture(scope="module")
def api(registry):
    return endpoints(make_lab(registry))


def opened(lab, source: str, model: str = "de-en", beam: int = 4):
    """A greedy run of `source` with the Beam tree tab open: (user, controls, the tree filled after the click)."""
    user, c = UserState(), Controls(model, source, options={"tree_beam": beam})
    lab.do(lab.decoding.run, user, c)
    answered = lab.open_tab(user, c, "beam_tree")
    assert answered["tree"] == {"op": "computing", "text": SLOW}  # the click does not wait for the search
    assert answered["hypothesis"] == {"op": "hypothesis", "node": None}
    return user, c, lab.fill(user)["tree"]


def weights(b64: str, shape: tuple) -> np.ndarray:
    import base64

    return np.frombuffer(base64.b64decode(b64), dtype="<u2").reshape(shape) / 65535


def branching_node(tree: dict, greedy: list[int], at_least: int = 3) -> int:
    """A pruned node at step >= `at_least` whose parent lies on the greedy path: its prefix shares the run's first
    steps and then leaves them."""
    parents = {0}
    for step, token in enumerate(greedy, start=1):
        child = next(i for i, p in enumerate(tree["parent"]) if p in parents and tree["token"][i] == token)
        if step >= at_least - 1:
            return next(i for i, p in enumerate(tree["parent"]) if p == child and tree["state"][i] == "p")
        parents = {child}
    raise AssertionError("the greedy path leaves the tree early")


@pytest.mark.parametrize(("model", "source"), [("de-en", DE), ("reverse", "hello42world")])
def test_the_tree_sent_is_the_beam_tree_endpoints_search(lab, model, source):
    """The same search as /beam_tree's under the run's own length limit (the Max length slider; /beam_tree's is
    256): the limit bounds what a live hypothesis can still reach, so it changes where the search stops."""
    user, _, tree = opened(lab, source, model)
    answer = jsonable(tree_record(user.run, 4))
    assert len(tree["parent"]) == len(answer["nodes"]) and tree["best"] == answer["best"]
    assert tree["text"] == answer["output_text"] and tree["beam"] == 4 and tree["alpha"] == 1.0
    for i, node in enumerate(answer["nodes"]):
        assert tree["parent"][i] == (-1 if node["parent"] is None else node["parent"])
        assert (tree["step"][i], tree["state"][i]) == (node["step"], node["state"][0])
        assert abs(tree["total"][i] - node["total"]) <= 5e-6 and abs(tree["logp"][i] - node["logp"]) <= 5e-6


def test_a_clicked_nodes_attention_is_the_export_of_a_decoding_forced_to_its_prefix(lab, registry):
    user, c, tree = opened(lab, DE)
    greedy = list(user.run.session.tokens)
    node = branching_node(tree, greedy)
    hypothesis = lab.do(pick, user, c, node)["hypothesis"]
    path = [tree["token"][i] for i in _path(tree, node)[1:]]
    assert path[:-1] == greedy[: len(path) - 1] and path[-1] != greedy[len(path) - 1]  # it leaves the run there
    assert hypothesis["node"] == node and hypothesis["step"] == len(path) == tree["step"][node]
    # the decoding forced to that prefix from a fresh session, exported as /attention exports it
    entry = registry.entry("de-en")
    run = new_run(entry, DE)
    for token in path:
        run.session.step(force=token)
    export = jsonable(attention_record(run.session, entry.pipeline.tokenizer, "de-en"))
    data, config = hypothesis["data"], entry.pipeline.model.config
    L, H, S = config.n_decoder_layers, config.n_heads, len(run.session.src_ids)
    assert data["out"]["labels"][-1] and len(data["steps"]) == len(export["steps"]) == len(path)
    for t, (drawn, exported) in enumerate(zip(data["steps"], export["steps"])):
        assert drawn["token"] == path[t]
        assert np.abs(weights(drawn["cross"], (L, H, S)) - np.array(exported["cross"])).max() < 2e-5
        assert np.abs(weights(drawn["self"], (L, H, t + 1)) - np.array(exported["decoder_self"])).max() < 2e-5
    encoder = weights(data["encoder"], (config.n_encoder_layers, H, S, S))
    assert np.abs(encoder - np.array(export["encoder"])).max() < 2e-5
    assert user.run.session.tokens == greedy  # a click shows the hypothesis; the decoding stays


def _walk(tree: dict, tokens: list[int]):
    """The nodes a decoding passes through, after the root, as long as it stays in the tree."""
    at = 0
    for token in tokens:
        at = next((i for i, p in enumerate(tree["parent"]) if p == at and tree["token"][i] == token), None)
        if at is None:
            return
        yield at


def _path(tree: dict, node: int) -> list[int]:
    path = [node]
    while tree["parent"][path[-1]] >= 0:
        path.append(tree["parent"][path[-1]])
    return path[::-1]


@pytest.mark.parametrize("strategy", ["greedy", "beam"])
def test_decoding_on_from_a_node_is_continue_and_back_undoes_it(lab, api, strategy):
    user, c, tree = opened(lab, DE)
    before, version = list(user.run.session.tokens), user.run.version
    node = branching_node(tree, before)
    lab.do(pick, user, c, node)
    answered = lab.do(decode_on(strategy), user, c)
    tokenizer = user.run.pipeline.tokenizer
    prefix = [tokenizer.id_to_token(tree["token"][i]) for i in _path(tree, node)[1:]]
    expected = api("continue", "de-en", DE, prefix, strategy, 4)
    assert tokenizer.tokens(user.run.session.tokens) == expected["output_tokens"]
    assert answered["output"] == expected["output_text"] != tokenizer.decode(before)
    assert answered["original"] == {"value": tokenizer.decode(before), "label": "Before the branch from the tree"}
    assert user.shown == tree["step"][node]  # the page shows the step it branched at
    answered = lab.do(lab.decoding.back, user, c)
    assert user.run.session.tokens == before and answered["output"] == tokenizer.decode(before)
    assert answered["original"]["value"] is None and user.run.version > version
    lab.do(lab.decoding.back, user, c)  # then Back steps back again, a token at a time
    assert user.run.session.tokens == before[:-1]


def test_back_undoes_the_branch_only_while_the_decoding_is_as_the_branch_left_it(lab):
    user, c, tree = opened(lab, DE)
    lab.do(pick, user, c, branching_node(tree, list(user.run.session.tokens)))
    lab.do(decode_on("greedy"), user, c)
    step = user.run.session.steps[1]
    c.shown = 2
    lab.do(lab.decoding.force, user, c, step.top_ids[1])  # a what-if after the branch
    forced = list(user.run.session.tokens)
    lab.do(lab.decoding.back, user, c)  # a step back, not back to before the branch
    assert user.run.session.tokens == forced[:-1] and loop(user.run).undo is not None


def test_nothing_picked_or_a_node_not_in_the_tree_gets_one_line(lab):
    user, c, tree = opened(lab, "abc", "reverse")
    with pytest.raises(InputError, match="Click a node of the tree first"):
        decode_on("greedy")(user, c)
    for bad in (len(tree["parent"]), -1, "x", None):
        with pytest.raises(InputError, match="No node .* in this tree"):
            pick(user, c, bad)
    with pytest.raises(InputError, match="Run a source first"):
        pick(UserState(), c, 0)


def test_another_beam_size_searches_again_and_forgets_the_clicked_node(lab):
    user, c, _ = opened(lab, DE)
    lab.do(pick, user, c, 5)
    c.options["tree_beam"] = 2
    answered = lab.do(lambda user, c: user.shown, user, c)
    assert answered["tree"]["op"] == "computing" and answered["hypothesis"]["node"] is None
    assert lab.fill(user)["tree"]["beam"] == 2


@needs_node
def test_the_page_lays_the_tree_out_and_folds_its_pruned_branches(lab):
    user, _, tree = opened(lab, DE)
    greedy = list(user.run.session.tokens)
    on_tree = 1 + sum(1 for _ in _walk(tree, greedy))
    body = """
      const nodes = tree.treeNodes(data.tree);
      const open = tree.treeLayout(nodes, false), shut = tree.treeLayout(nodes, true);
      const columns = (layout) => { const seen = new Set(); for (const [id, row] of layout.rows)
        seen.add(`${nodes[id].step}:${row}`); return seen.size; };
      const pruned = nodes.filter((n) => n.state === "p").length;
      const unfolded = tree.treeLayout(nodes, true, new Set([shut.marks[0].parent]));
      return {n: nodes.length, open: open.rows.size, openCells: columns(open), shut: shut.rows.size,
        shutCells: columns(shut), folded: shut.marks.reduce((s, m) => s + m.ids.length, 0), pruned,
        marks: shut.marks.length, unfolded: unfolded.rows.size - shut.rows.size, first: shut.marks[0].ids.length,
        heights: [open.height, shut.height],
        best: tree.pathTo(nodes, data.tree.best).map((id) => nodes[id].label),
        greedy: tree.decodingPath(nodes, data.greedy).length,
        score: tree.finishedScore(-3.5, 7, 0.6)};
    """
    result = run_modules({"tree": "beam_tree/tree.mjs"}, body, {"tree": tree, "greedy": greedy})
    assert result["open"] == result["openCells"] == result["n"]  # every node drawn, each in a cell of its own
    assert result["shut"] == result["shutCells"] == result["n"] - result["pruned"]
    assert result["folded"] == result["pruned"] and result["marks"] > 0
    assert result["unfolded"] == result["first"]  # unfolding one node shows its pruned children alone
    assert result["heights"][1] < result["heights"][0]
    best = [tree["label"][i] for i in _path(tree, tree["best"])]
    assert result["best"] == best and result["greedy"] == on_tree > 3
    assert result["score"] == pytest.approx(length_normalise(-3.5, 7, 0.6))
