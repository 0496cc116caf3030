"""The beam search as a tree, as JSON (/beam_tree), and a decoding forced through a prefix and on from it
(/continue). Tokens are spelled as /attention's output_tokens; the search is the one /translate's "beam" runs."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Literal

from transformer import DecodingSession
from transformer.beam_tree import SearchTree

from ..checks import InputError, quoted
from ..core.payload import Decoding
from ..core.units import token_id, token_label
from ..messages import OMITTED
from ..run.search import checked_beam, decoded_on, searched
from ..run.state import Run


@dataclass
class Node:
    id: int
    parent: int | None  # null for the root (the start token, step 0)
    step: int
    token: str
    logp: float
    total: float  # the parent's total plus its logp
    state: str  # "kept", "pruned" or "finished"


@dataclass
class Tree:
    nodes: list[Node]
    best: int  # the node the best hypothesis ends at
    output_text: str


@dataclass
class Continued:
    output_tokens: list[str]  # the prefix's included, the end token last
    output_text: str


def search_tree(session: DecodingSession, tokenizer, beam: int) -> tuple[SearchTree, str]:
    """The session's source searched with beam size `beam` under its interventions, recorded: the tree and the text
    its best hypothesis writes."""
    result = searched(session, beam, tree=True)
    return result.tree, tokenizer.decode(result.tokens)


def tree_record(run: Run, beam_size: object) -> Tree:
    """The run's source searched with beam size `beam_size`, recorded."""
    tokenizer = run.pipeline.tokenizer
    tree, text = search_tree(run.session, tokenizer, checked_beam(beam_size))
    spell = tokenizer.id_to_token
    nodes = [Node(n.id, n.parent, n.step, spell(n.token), n.logp, n.total, n.state) for n in tree.nodes]
    return Tree(nodes, tree.best, text)


@dataclass
class TreeMessage:
    """The tree as the page draws it (beam_tree/tree.mjs): a column per field, a value per node in id order."""

    serial: int  # the run it searched: the page draws no tree of another run
    beam: int
    alpha: float  # the length penalty's
    best: int
    text: str  # what the best hypothesis writes
    parent: list[int]  # -1 for the root
    step: list[int]
    token: list[int]
    label: list[str]
    logp: list[float]  # to 5 decimals
    total: list[float]
    state: str  # a letter per node: k kept, p pruned, f finished
    op: Literal["tree"] = "tree"


@dataclass
class Hypothesis:
    """A clicked node's hypothesis as the page draws it (beam_tree/hypothesis.mjs): its path forced, as a decoding."""

    node: int | None  # null: none clicked (and nothing else is said)
    step: Annotated[int | None, OMITTED] = None
    text: Annotated[str | None, OMITTED] = None
    total: Annotated[float | None, OMITTED] = None
    state: Annotated[str | None, OMITTED] = None
    data: Annotated[Decoding | None, OMITTED] = None
    op: Literal["hypothesis"] = "hypothesis"


def page_tree(run: Run, tree: SearchTree, text: str, beam: int) -> TreeMessage:
    """The tree as the page draws it, log p and totals to 5 decimals."""
    tokenizer, special = run.pipeline.tokenizer, run.pipeline.model.special_ids
    nodes = tree.nodes
    return TreeMessage(
        serial=run.serial,
        beam=beam,
        alpha=tree.length_penalty,
        best=tree.best,
        text=text,
        parent=[-1 if n.parent is None else n.parent for n in nodes],
        step=[n.step for n in nodes],
        token=[n.token for n in nodes],
        label=[token_label(tokenizer, n.token, special) for n in nodes],
        logp=[round(n.logp, 5) for n in nodes],
        total=[round(n.total, 5) for n in nodes],
        state="".join(n.state[0] for n in nodes),
    )


def prefix_ids(run: Run, prefix: object) -> list[int]:
    """The prefix's tokens (spelled as output_tokens spells them), or InputError naming one the model lacks."""
    if not isinstance(prefix, list) or not all(isinstance(t, str) for t in prefix):
        raise InputError(
            f"The prefix must be a list of tokens, spelled as output_tokens spells them (got {quoted(prefix)})."
        )
    tokenizer, model = run.pipeline.tokenizer, run.pipeline.model
    ids = []
    for spelled in prefix:
        found = token_id(tokenizer, spelled, model.config.tgt_vocab_size)
        if found is None:
            raise InputError(f"Unknown token {spelled!r} in the prefix: spell it as output_tokens does.")
        ids.append(found)
    if len(ids) > run.session.max_new_tokens:
        raise InputError(
            f"The prefix is {len(ids)} tokens; a decoding here writes at most {run.session.max_new_tokens}."
        )
    return ids


def continued(run: Run, prefix: object, strategy: str, beam_size: object) -> Continued:
    """The prefix forced first, then decoding on greedily or by beam search: {"output_tokens" (the prefix's
    included, the end token last), "output_text"}."""
    ids, tokenizer = prefix_ids(run, prefix), run.pipeline.tokenizer
    session, _ = decoded_on(run.session, ids, strategy, beam_size, tokenizer.id_to_token)
    return Continued(tokenizer.tokens(session.tokens), tokenizer.decode(session.tokens))
