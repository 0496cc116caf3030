"""The beam search as a tree, as JSON (/beam_tree), and a decoding forced through a prefix and on from it
(/continue). Tokens are spelled as /attention's output_tokens; the search is the one /translate's "beam" runs."""

from __future__ import annotations

import torch

from transformer import DecodingSession, beam_search
from transformer.beam_tree import SearchTree

from ..attention.units import token_label
from ..checks import InputError, as_int, quoted
from ..decoding.state import Run
from ..why.contrast import token_id
from .hypothesis import decoded_on

MAX_TREE_BEAM = 16  # a tree of beam 16 over 64 steps is about 16 × 16 × 64 nodes: what a page can still draw


def checked_beam(beam_size: object) -> int:
    size = as_int(beam_size)
    if size is None or not 1 <= size <= MAX_TREE_BEAM:
        raise InputError(f"Beam size must be a whole number from 1 to {MAX_TREE_BEAM} (got {quoted(beam_size)}).")
    return size


def searched(session: DecodingSession, tokenizer, beam: int) -> tuple[SearchTree, str]:
    """The session's source searched with beam size `beam` under its interventions, recorded: the tree and the text
    its best hypothesis writes."""
    src = torch.tensor([session.src_ids], device=next(session.model.parameters()).device)
    result = beam_search(
        session.model, src, beam, session.max_new_tokens, interventions=session.interventions, record_tree=True
    )[0]
    return result.tree, tokenizer.decode(result.tokens)


def tree_record(run: Run, beam_size: object) -> dict:
    """The run's source searched with beam size `beam_size`, recorded: {"nodes": [{"id", "parent", "step", "token",
    "logp", "total", "state"}], "best", "output_text"}."""
    tokenizer = run.pipeline.tokenizer
    tree, text = searched(run.session, tokenizer, checked_beam(beam_size))
    nodes = [
        {
            "id": n.id,
            "parent": n.parent,
            "step": n.step,
            "token": tokenizer.id_to_token(n.token),
            "logp": n.logp,
            "total": n.total,
            "state": n.state,
        }
        for n in tree.nodes
    ]
    return {"nodes": nodes, "best": tree.best, "output_text": text}


def page_tree(run: Run, tree: SearchTree, text: str, beam: int) -> dict:
    """The tree as the page draws it (beam_tree/tree.mjs): the run's number, then a column per field, a value per
    node in id order, log p and totals to 5 decimals, each node's state as one letter (k kept, p pruned, f finished)."""
    tokenizer, special = run.pipeline.tokenizer, run.pipeline.model.special_ids
    nodes = tree.nodes
    return {
        "op": "tree",
        "serial": run.serial,  # the run it searched: the page draws no tree of another run
        "beam": beam,
        "alpha": tree.length_penalty,
        "best": tree.best,
        "text": text,
        "parent": [-1 if n.parent is None else n.parent for n in nodes],
        "step": [n.step for n in nodes],
        "token": [n.token for n in nodes],
        "label": [token_label(tokenizer, n.token, special) for n in nodes],
        "logp": [round(n.logp, 5) for n in nodes],
        "total": [round(n.total, 5) for n in nodes],
        "state": "".join(n.state[0] for n in nodes),
    }


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


def continued(run: Run, prefix: object, strategy: str, beam_size: object) -> dict:
    """The prefix forced first, then decoding on greedily or by beam search: {"output_tokens" (the prefix's
    included, the end token last), "output_text"}."""
    ids, tokenizer = prefix_ids(run, prefix), run.pipeline.tokenizer
    size = checked_beam(beam_size) if strategy == "beam" else 1
    session = decoded_on(run.session, ids, strategy, size, tokenizer.id_to_token)
    return {"output_tokens": tokenizer.tokens(session.tokens), "output_text": tokenizer.decode(session.tokens)}
