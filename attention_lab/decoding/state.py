"""One user's decoding: the run they are stepping through (it carries its model), what each feature keeps of it,
and decoding it to the end (greedy, or beam search replayed through the session)."""

from __future__ import annotations

import itertools
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TypeVar

import torch

from transformer import DecodingSession, Seq2SeqPipeline, beam_search
from transformer.decoding import Step

from ..checks import InputError, as_int, check_source, quoted
from ..controls import Controls
from ..models.registry import ModelEntry

MAX_BEAM = 8
STRATEGIES = ("greedy", "beam")
T = TypeVar("T")


@dataclass
class Before:
    """The decoding before the last what-if, ablation or edit, kept to compare with."""

    steps: list[Step]
    at: int  # the step (1-based) that the what-if forced, or the edit or ablation first changed
    change: str  # "what-if", "ablation" or "edit"


@dataclass
class Undo:
    """A decoding replaced whole (decoded on from a node of the beam tree), kept for Back to restore."""

    version: int  # the run's version right after the replacement: Back restores it only then
    session: DecodingSession
    before: Before | None
    beams: list[list]


@dataclass
class Run:
    """A decoding the user steps through, and its history: what each control did to it."""

    entry: ModelEntry  # the model it decodes with
    text: str  # the source as the user typed it
    session: DecodingSession
    top_k: int = 8  # the options the run was started with, as the user asked for them
    max_len: int = 64
    notice: str = ""  # e.g. "the source was truncated"
    beams: list[list] = field(default_factory=list)  # beam search's live beams at each step, when it ran
    before: Before | None = None
    # The interventions the session holds, in words (said in the notice while they last), and the decoding without
    # them (the head summary describes it; it stays put while heads are tested); None while it holds none.
    held: str = ""
    plain: DecodingSession | None = None
    # The next greedy step, decoded while the page showed this version (Decoding.step_ahead): a Step takes it.
    ahead: tuple[int, DecodingSession] | None = None
    undo: Undo | None = None  # the decoding Back restores, while the run is as a replacement left it
    serial: int = 0  # its number in the user's session (UserState.run), telling runs apart for redrawing
    version: int = 0  # bumped by every change to the session's steps
    last_change: str = "any"  # what the last change did: "step" (one step more), "back" (one fewer), or "any"
    states: dict[str, object] = field(default_factory=dict)  # what each feature keeps of this run, by feature id

    @property
    def pipeline(self) -> Seq2SeqPipeline:
        return self.entry.pipeline

    def changed(self, how: str = "any") -> None:
        self.version += 1
        self.last_change = how
        self.ahead = None

    def state(self, feature: str, make: Callable[[], T]) -> T:
        """What the feature `feature` keeps of this run, made by `make` the first time it asks."""
        if feature not in self.states:
            self.states[feature] = make()
        return self.states[feature]


def first_difference(before: list[Step], after: list[Step]) -> int:
    """The first step (1-based) where two decodings took different tokens; 1 if they never do."""
    for i, (a, b) in enumerate(zip(before, after)):
        if a.token != b.token:
            return i + 1
    return 1 if len(before) == len(after) else min(len(before), len(after)) + 1


def new_run(entry: ModelEntry, text: str, top_k: int = 8, max_len: int | None = None) -> Run:
    """A fresh run of `text` on the entry's model, its source checked (InputError with a clear message if unusable)."""
    pipeline = entry.pipeline
    ids, notice = check_source(pipeline, text)
    notice = (notice + " " + entry.length_notice(ids)).strip()
    max_len = int(max_len) if max_len else pipeline.model.config.max_new_tokens
    session = DecodingSession(pipeline.model, ids, top_k=int(top_k), max_new_tokens=max_len)
    return Run(entry, text, session, top_k=int(top_k), max_len=max_len, notice=notice)


def asks_for(run: Run | None, c: Controls, max_len: int | None) -> bool:
    """Whether the controls (with the max length they resolve to) ask for this run, or for a new one."""
    wanted = (c.model, c.source, int(c.top_k), max_len)
    return run is not None and (run.entry.name, run.text, run.top_k, run.max_len) == wanted


class UserState:
    """One browser session's decoding. Events of a session may overlap (Step clicked while Run works), so they take
    the lock and read `run` from here rather than from a value captured when the event was queued."""

    def __init__(self) -> None:
        self._run: Run | None = None
        self._serials = itertools.count(1)
        self.lock = threading.Lock()
        self.tab = "attention"  # the tab the page shows; the others are drawn when opened
        self.shown: int | None = None  # the step the page was last told to show (None: the latest)
        self.drawn: dict[str, object] = {}  # what the page shows now, per output, as a key: unchanged ones are skipped
        self.answered: Controls | None = None  # the controls the last action was answered for (what fill makes)
        self.states: dict[str, object] = {}  # what each feature keeps for this user across runs, by feature id

    @property
    def run(self) -> Run | None:
        return self._run

    @run.setter
    def run(self, run: Run | None) -> None:
        """A run the session has not had gets the session's next number: the same requests in a fresh session
        are answered the same, the page's keys included."""
        if run is not None and not run.serial:
            run.serial = next(self._serials)
        self._run = run

    def state(self, feature: str, make: Callable[[], T]) -> T:
        """What the feature `feature` keeps for this user, made by `make` the first time it asks."""
        if feature not in self.states:
            self.states[feature] = make()
        return self.states[feature]

    def __deepcopy__(self, memo) -> UserState:  # gradio copies the initial value into each new session
        return UserState()


def shown_step(session: DecodingSession, step: int | None) -> int:
    """The step to show (0 = before any output); None is the latest, and after a finished run the last word rather
    than the end-of-sentence token."""
    n = len(session.steps)
    if step is None:
        ends_with_eos = n > 1 and session.steps[-1].token == session.model.config.eos_id
        return n - 1 if ends_with_eos else n
    return max(0, min(int(step), n))


def replay_beam(run: Run, beam_size: int) -> list[list]:
    """Beam search, then the best hypothesis replayed through the session so the attention drawn is its own.

    Returns the beam history (the live beams and their scores at each step) for the beam view.
    """
    session = run.session
    src = torch.tensor([session.src_ids], device=next(session.model.parameters()).device)
    result = beam_search(
        session.model, src, beam_size, session.max_new_tokens, record_history=True, interventions=session.interventions
    )[0]
    session.reset()
    replayed(session, result.tokens)
    return result.history


def replayed(session: DecodingSession, tokens: list[int]) -> DecodingSession:
    """The session's steps forced on through `tokens` (those it has not written yet) and the end token, until it
    finishes: a search's hypothesis decoded by the session, so that the attention drawn is that hypothesis's own."""
    for token in [*tokens[len(session.steps) :], session.model.config.eos_id]:
        if session.finished:
            break
        session.step(force=token)
    return session


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
