"""Beam search from a session, in one place: the session's source searched under its interventions and length limit
(from a prefix, if given), a hypothesis forced on a session so that the views draw its own attention, and decoding on
from a prefix, greedily or by beam search. Run's beam search, the Beam tree tab, /continue and the notebook decode
through here; one beam-size limit holds for all of them."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import torch

from transformer import DecodingSession, beam_search
from transformer.decoding import BeamResult

from ..checks import InputError, as_int, quoted

STRATEGIES = ("greedy", "beam")
MAX_BEAM = 16  # a tree of beam 16 over 64 steps is about 16 × 16 × 64 nodes: what a page can still draw


def checked_strategy(strategy: object) -> str:
    if strategy not in STRATEGIES:
        raise InputError(f'Strategy must be "greedy" or "beam" (got {quoted(strategy)}).')
    return str(strategy)


def checked_beam(beam_size: object) -> int:
    """A beam size the user sent, as a whole number from 1 to MAX_BEAM, or InputError saying so."""
    size = as_int(beam_size)
    if size is None or not 1 <= size <= MAX_BEAM:
        raise InputError(f"Beam size must be a whole number from 1 to {MAX_BEAM} (got {quoted(beam_size)}).")
    return size


def searched(
    session: DecodingSession, beam_size: int, prefix: Sequence[int] = (), history: bool = False, tree: bool = False
) -> BeamResult:
    """The session's source searched by beam search, under its interventions and length limit, from `prefix`;
    with `history` the live beams of each step, with `tree` the whole search (transformer.beam_tree)."""
    src = torch.tensor([session.src_ids], device=next(session.model.parameters()).device)
    return beam_search(
        session.model,
        src,
        beam_size,
        session.max_new_tokens,
        record_history=history,
        interventions=session.interventions,
        record_tree=tree,
        prefix=list(prefix),
    )[0]


def replayed(session: DecodingSession, tokens: list[int]) -> DecodingSession:
    """The session's steps forced on through `tokens` (those it has not written yet) and the end token, until it
    finishes: a search's hypothesis decoded by the session, so that the attention drawn is that hypothesis's own."""
    for token in [*tokens[len(session.steps) :], session.model.config.eos_id]:
        if session.finished:
            break
        session.step(force=token)
    return session


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
    session: DecodingSession, path: list[int], strategy: str, beam_size: object, spell: Callable[[int], str] = str
) -> tuple[DecodingSession, BeamResult | None]:
    """`path` forced, then decoded on to the end: greedily, or by beam search from the path (its best hypothesis
    replayed through the session, so that the attention drawn is its own); and the search, for beam search. The
    session itself is left as it is. The strategy and beam size are checked before anything is decoded."""
    strategy = checked_strategy(strategy)
    size = checked_beam(beam_size) if strategy == "beam" else 1
    fork = forced(session, path, spell)
    if strategy == "greedy" or fork.finished:
        fork.run()
        return fork, None
    found = searched(fork, size, prefix=path, history=True)
    return replayed(fork, found.tokens), found
