"""One user's decoding: the run they are stepping through, and decoding it to the end (greedy, or beam replayed)."""

from __future__ import annotations

import itertools
import threading
from dataclasses import dataclass, field

import torch

from transformer import DecodingSession, beam_search
from transformer.decoding import Step

from .checks import InputError, as_int, quoted

MAX_BEAM = 8
STRATEGIES = ("greedy", "beam")
_serials = itertools.count(1)


@dataclass
class Run:
    model_name: str
    text: str  # the source as the user typed it
    session: DecodingSession
    top_k: int = 8  # the options the run was started with, as the user asked for them
    max_len: int = 64
    notice: str = ""  # e.g. "the source was truncated"
    beams: list[list] = field(default_factory=list)  # beam search history rows, when beam search ran
    original: list[Step] | None = None  # the decoding before the last what-if, ablation or edit, to compare with
    forced_at: int = 0  # the step (1-based) that the last what-if forced or edit changed
    change: str = "what-if"  # what made `original` the past: "what-if", "ablation" or "edit"
    held: str = ""  # the interventions the session holds, in words (said in the notice while they last)
    effects: list | None = None  # after an ablation: lens.StepEffect per step of the original decoding
    # The decoding without the ablation or edit, which the head summary describes (it stays put while heads are
    # tested); None while the session holds no intervention.
    base: DecodingSession | None = None
    serial: int = field(default_factory=lambda: next(_serials))  # tells runs apart, for redrawing only what changed
    version: int = 0  # bumped by every change to the session's steps

    def changed(self) -> None:
        self.version += 1


class UserState:
    """One browser session's decoding. Events of a session may overlap (Step clicked while Run works), so they take
    the lock and read `run` from here rather than from a value captured when the event was queued."""

    def __init__(self) -> None:
        self.run: Run | None = None
        self.lock = threading.Lock()
        self.tab = "cross"  # the attention view the page shows; the others are drawn when opened
        self.shown: int | None = None  # the step the page shows (None: the latest)
        self.drawn: dict[str, object] = {}  # what the page shows now, per output, as a key: unchanged ones are skipped

    def __deepcopy__(self, memo) -> UserState:  # gradio copies the initial value into each new session
        return UserState()


def replay_beam(run: Run, beam_size: int) -> list[list]:
    """Beam search, then the best hypothesis replayed through the session so the attention drawn is its own.

    Returns the beam history (the live beams and their scores at each step) for the beam view.
    """
    session = run.session
    src = torch.tensor([session.src_ids])
    result = beam_search(
        session.model, src, beam_size, session.max_new_tokens, record_history=True, interventions=session.interventions
    )[0]
    session.reset()
    for token in [*result.tokens, session.model.config.eos_id]:
        if session.finished:
            break
        session.step(force=token)
    return result.history


def decode_to_end(run: Run, strategy: str, beam_size: object) -> list[list]:
    """Decode the run to the end with "greedy" or "beam" search; returns the beam history (empty for greedy).

    The strategy and beam size are checked before the session is decoded: a bad choice leaves its steps as they are.
    """
    if strategy not in STRATEGIES:
        raise InputError(f'Strategy must be "greedy" or "beam" (got {quoted(strategy)}).')
    if strategy == "beam":
        size = as_int(beam_size)
        if size is None or not 1 <= size <= MAX_BEAM:
            raise InputError(f"Beam size must be between 1 and {MAX_BEAM} (got {quoted(beam_size)}).")
        return replay_beam(run, size)
    run.session.run()
    return []
