"""The Beam tree tab: the run's source searched by beam search, drawn as the tree of every continuation the search
weighed (beam_tree/tree.mjs); a click on a node shows that hypothesis's attention at its step in every kind
(beam_tree/hypothesis.mjs, with the Attention tab's views), and "Decode on from here" makes the hypothesis, decoded
on greedily or by beam search, the run's decoding, which the next Back undoes.

The search is slow for a large beam on a long source: the tree is sent after the click that asks for it (a
placeholder first). A node's attention comes with its click: its path forced on a fork of the run's session.
While the page decodes and draws the tree, it makes all of this itself (beam_tree/in_page.mjs), as here.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import gradio as gr

from transformer.beam_tree import SearchTree

from ..assets.components import drawn
from ..checks import InputError, as_int
from ..controls import Controls
from ..core import payload
from ..decoding.actions import branched, replace_decoding
from ..feature import DATA, Feature, Output, Screen
from ..run.search import MAX_BEAM, checked_beam, decoded_on, forced
from ..run.state import BRANCH, Run, UserState, interventions_key
from .api import ENDPOINTS
from .messages import Hypothesis, TreeMessage, page_tree, search_tree

NOTE = (
    "The beam search as a tree: at each step, each hypothesis the search kept is extended by its most probable "
    "tokens, as many as the beam size. Kept extensions go on; pruned ones (faded) the search let go; an end token "
    "finishes a hypothesis. Thicker edges are likelier tokens; the best hypothesis is marked in orange, the "
    "decoding on the left in blue. Drag to pan along a long sentence. Click a node to see that hypothesis's "
    "attention at its step below, then decode on from it: the result becomes the decoding, and Back undoes it."
)
OUTPUTS = (Output("tree", DATA, slow="Searching…"), Output("hypothesis", DATA))
NODE_FIRST = "Click a node of the tree first, then decode on from it."


@dataclass
class TreeState:
    """What the tab keeps of a run: its last search (the key it was asked with, the tree, the output's text) and
    the node clicked in that search."""

    search: tuple[tuple, SearchTree, str] | None = None
    picked: tuple[tuple, int] | None = None

    def tree(self, run: Run, key: tuple, beam: int) -> tuple[SearchTree, str]:
        if self.search is None or self.search[0] != key:
            tree, text = search_tree(run.session, run.pipeline.tokenizer, beam)
            self.search = (key, tree, text)
        return self.search[1], self.search[2]

    def node(self, key: tuple) -> int | None:
        return self.picked[1] if self.picked is not None and self.picked[0] == key else None


def beam_of(c: Controls) -> int:
    return checked_beam(c.option("tree_beam", 4))


def key_of(run: Run, beam: int) -> tuple:
    """What a search depends on: the model, the source, the beam, the length limit and the interventions the
    run holds."""
    session = run.session
    return (run.entry.name, tuple(session.src_ids), beam, session.max_new_tokens, interventions_key(session))


def view(s: Screen) -> dict:
    run, beam = s.run, beam_of(s.controls)
    state, key = run.states.get(TreeState), key_of(run, beam)
    node = state.node(key)

    def tree() -> TreeMessage:
        return page_tree(run, *state.tree(run, key, beam), beam)

    shown = (run.serial, *key)  # the page draws no tree of another run: a new run's is sent again
    return {"tree": (shown, tree), "hypothesis": ((shown, node), hypothesis_message(run, state, key, beam, node))}


def hypothesis_message(run: Run, state: TreeState, key: tuple, beam: int, node: int | None) -> Callable[[], Hypothesis]:
    """How to make what the page draws of the clicked node: its path forced, as the Attention tab's decoding."""

    def make() -> Hypothesis:
        if node is None:
            return Hypothesis(None)
        tree, tokenizer = state.tree(run, key, beam)[0], run.pipeline.tokenizer
        path, chosen = tree.path(node), tree.nodes[node]
        session = forced(run.session, path, tokenizer.id_to_token)
        data = payload.full(session, tokenizer, run.entry.name)
        return Hypothesis(node, chosen.step, tokenizer.decode(path), chosen.total, chosen.state, data)

    return make


def picked_node(run: Run, state: TreeState, c: Controls) -> tuple[SearchTree, int]:
    beam = beam_of(c)
    key = key_of(run, beam)
    node = state.node(key)
    if node is None:
        raise InputError(NODE_FIRST)
    return state.tree(run, key, beam)[0], node


def pick(user: UserState, c: Controls, node: object) -> int | None:
    """Show the node's hypothesis (a node id of the tree drawn) below the tree."""
    if user.run is None:
        raise InputError("Run a source first, then click a node of its tree.")
    run, beam = user.run, beam_of(c)
    key, state = key_of(run, beam), run.states.get(TreeState)
    tree = state.tree(run, key, beam)[0]
    number = as_int(node)
    if number is None or not 0 <= number < len(tree.nodes):
        raise InputError(f"No node {node!r} in this tree: click one of its nodes.")
    state.picked = (key, number)
    return user.shown


def decode_on(strategy: str) -> Callable[[UserState, Controls], int]:
    """The action that decodes on from the clicked node by `strategy` (the tree's beam size for "beam")."""

    def action(user: UserState, c: Controls) -> int:
        if user.run is None:
            raise InputError("Run a source first, then click a node of its tree.")
        run = user.run
        tree, node = picked_node(run, run.states.get(TreeState), c)
        path, spell = tree.path(node), run.pipeline.tokenizer.id_to_token
        session, _ = decoded_on(run.session, path, strategy, beam_of(c), spell)
        replace_decoding(run, session, branched(run, session, BRANCH), undoable=True)
        return max(1, tree.nodes[node].step)

    return action


def layout(registry, default: str) -> dict:
    c = {}
    gr.Markdown(NOTE, elem_classes="note")
    info = "Hypotheses kept at each step (the decoding options' beam size is for Run)."
    c["tree_beam"] = gr.Slider(
        1, MAX_BEAM, value=4, step=1, label="Beam size of the tree", info=info, elem_id="beam-tree-beam"
    )
    c["tree"] = drawn("beam_tree/tree.mjs", "beam-tree", classes=("lab-slow",))
    with gr.Row(elem_classes="beam-tree-buttons"):
        c["tree_greedy"] = gr.Button(
            "Decode on from here, greedily", size="md", min_width=160, elem_id="beam-tree-greedy"
        )
        c["tree_beam_on"] = gr.Button(
            "Decode on from here, by beam search", size="md", min_width=160, elem_id="beam-tree-beam-on"
        )
    c["hypothesis"] = drawn("beam_tree/hypothesis.mjs", "beam-hypothesis")
    return c


def wire(c: dict, wiring) -> None:
    wiring.on(c["tree"].select, pick, data=wiring.picked("node"))
    wiring.on(c["tree_greedy"].click, decode_on("greedy"))
    wiring.on(c["tree_beam_on"].click, decode_on("beam"))
    wiring.on(c["tree_beam"].change, lambda user, controls: user.shown, trigger_mode="always_last")


BEAM_TREE = Feature(
    "beam_tree",
    "Beam tree",
    layout=layout,
    outputs=OUTPUTS,
    view=view,
    wire=wire,
    controls=("tree_beam",),
    endpoints=ENDPOINTS,
    state=TreeState,
    messages=(TreeMessage, Hypothesis),
    stylesheet=Path(__file__).with_name("beam_tree.css"),
    in_page=True,
    # the tree; a node clicked in the page, and decoding on from it, the page makes too (beam_tree/in_page.mjs): the
    # server draws the hypothesis of a click it is sent
    in_page_outputs=("tree",),
    texts={"change": BRANCH, "node_first": NODE_FIRST},
)
