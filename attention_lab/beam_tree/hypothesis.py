"""A hypothesis of the search as a decoding: its tokens forced on a session (whose attention the views draw), and the
decoding on from it, greedily or by beam search. The Beam tree tab and /continue both decode on through here."""

from __future__ import annotations

from collections.abc import Callable

import torch

from transformer import DecodingSession, beam_search

from ..checks import InputError, quoted
from ..decoding.state import replayed

STRATEGIES = ("greedy", "beam")


def forced(session: DecodingSession, path: list[int], spell: Callable[[int], str] = str) -> DecodingSession:
    """A session of the same source and interventions whose steps wrote `path`: the session's steps it shares with
    the path are kept (the attention of a step depends only on the tokens before it), the rest forced. The session
    itself is left as it is. InputError, a token named by `spell`, when the model may not write the path."""
    fork = session.fork()
    same = 0
    while same < min(len(path), len(fork.steps)) and fork.steps[same].token == path[same]:
        same += 1
    fork.rewind(same)
    for step, token in enumerate(path[same:], start=same + 1):
        if fork.finished:
            raise InputError("The prefix goes on after the end token: cut it there.")
        if not fork.can_write(token, step):
            raise InputError(f"The model may not write {spell(token)!r} at step {step}.")
        fork.step(force=token)
    return fork


def decoded_on(
    session: DecodingSession, path: list[int], strategy: str, beam_size: int, spell: Callable[[int], str] = str
) -> DecodingSession:
    """`path` forced, then decoded on to the end: greedily, or by beam search from the path (its best hypothesis
    replayed through the session, so that the attention drawn is its own). The session itself is left as it is."""
    if strategy not in STRATEGIES:
        raise InputError(f'Strategy must be "greedy" or "beam" (got {quoted(strategy)}).')
    fork = forced(session, path, spell)
    if strategy == "greedy" or fork.finished:
        fork.run()
        return fork
    src = torch.tensor([fork.src_ids], device=next(fork.model.parameters()).device)
    found = beam_search(fork.model, src, beam_size, fork.max_new_tokens, interventions=fork.interventions, prefix=path)
    return replayed(fork, found[0].tokens)
