"""The beam search as a tree, as JSON (/beam_tree), and a decoding forced through a prefix and on from it
(/continue). Tokens are spelled as /attention's output_tokens; the search is the one /translate's "beam" runs."""

from __future__ import annotations

import torch

from transformer import beam_search

from ..checks import InputError, as_int, quoted
from ..decoding.state import Run
from ..why.contrast import token_id

MAX_TREE_BEAM = 16  # a tree of beam 16 over 64 steps is about 16 × 16 × 64 nodes: what a page can still draw


def checked_beam(beam_size: object) -> int:
    size = as_int(beam_size)
    if size is None or not 1 <= size <= MAX_TREE_BEAM:
        raise InputError(f"Beam size must be a whole number from 1 to {MAX_TREE_BEAM} (got {quoted(beam_size)}).")
    return size


def tree_record(run: Run, beam_size: object) -> dict:
    """The run's source searched with beam size `beam_size`, recorded: {"nodes": [{"id", "parent", "step", "token",
    "logp", "total", "state"}], "best", "output_text"}."""
    size, session, tokenizer = checked_beam(beam_size), run.session, run.pipeline.tokenizer
    src = torch.tensor([session.src_ids], device=next(session.model.parameters()).device)
    result = beam_search(
        session.model, src, size, session.max_new_tokens, interventions=session.interventions, record_tree=True
    )[0]
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
        for n in result.tree.nodes
    ]
    return {"nodes": nodes, "best": result.tree.best, "output_text": tokenizer.decode(result.tokens)}


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
    ids, session, tokenizer = prefix_ids(run, prefix), run.session, run.pipeline.tokenizer
    if strategy not in ("greedy", "beam"):
        raise InputError(f'Strategy must be "greedy" or "beam" (got {quoted(strategy)}).')
    for token in ids:
        if session.finished:
            raise InputError("The prefix goes on after the end token: cut it there.")
        if not session.can_write(token, len(session.steps) + 1):
            raise InputError(
                f"The model may not write {tokenizer.id_to_token(token)!r} at step {len(session.steps) + 1}."
            )
        session.step(force=token)
    if strategy == "greedy":
        session.run()
        tokens = list(session.tokens)
    else:
        src = torch.tensor([session.src_ids], device=next(session.model.parameters()).device)
        limit = session.max_new_tokens
        result = beam_search(session.model, src, checked_beam(beam_size), limit, prefix=ids)[0]
        ended = len(result.tokens) < limit  # a hypothesis cut at the limit has no end token
        tokens = [*result.tokens, session.model.config.eos_id] if ended else result.tokens
    return {"output_tokens": tokenizer.tokens(tokens), "output_text": tokenizer.decode(tokens)}
