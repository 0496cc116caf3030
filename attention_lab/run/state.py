"""One user's decoding: the run they are stepping through (the decoding, with its model, source and options), what
each feature keeps of it and of the user (a typed object per feature, written by that feature alone), and what the
step loop itself keeps of a run (the decoding before the last change, Back's undo, the beams, a step decoded ahead).
"""

from __future__ import annotations

import itertools
import threading
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import TypeVar

from transformer import DecodingSession, Head, Interventions, Seq2SeqPipeline
from transformer.decoding import Step

from ..checks import check_source
from ..controls import Controls
from ..core.naming import describe_heads
from ..core.units import word_label
from ..models.registry import ModelEntry

T = TypeVar("T")


class States:
    """What each feature keeps, one object per feature, by its type (the `state` or `user_state` its Feature
    declares): made empty the first time it is asked for."""

    def __init__(self) -> None:
        self._kept: dict[type, object] = {}

    def get(self, kind: Callable[[], T]) -> T:
        if kind not in self._kept:
            self._kept[kind] = kind()
        return self._kept[kind]

    def clear(self, kind: type) -> None:
        """Forget what `kind`'s feature kept: it starts empty again."""
        self._kept.pop(kind, None)

    def kinds(self) -> list[type]:
        return list(self._kept)


@dataclass
class Run:
    """A decoding the user steps through: the model it decodes with, the source as typed, the options it was started
    with, and the session; `version` counts the changes to the session's steps."""

    entry: ModelEntry
    text: str
    session: DecodingSession
    top_k: int = 8
    max_len: int = 64
    notice: str = ""  # e.g. "the source was truncated"
    serial: int = 0  # its number in the user's session (UserState.run), telling runs apart for redrawing
    version: int = 0
    last_change: str = "any"  # what the last change did: "step" (one step more), "back" (one fewer), or "any"
    states: States = field(default_factory=States)  # what each feature keeps of this run

    @property
    def pipeline(self) -> Seq2SeqPipeline:
        return self.entry.pipeline


BRANCH = "branch from the tree"  # "Before the branch from the tree": the decoding a Beam tree node's replaced


@dataclass
class Before:
    """The decoding before the last what-if, ablation, edit or branch from the tree, kept to compare with."""

    steps: list[Step]
    at: int  # the step (1-based) that the what-if forced, or the change first changed
    change: str  # "what-if", "ablation", "edit" or BRANCH


@dataclass
class Undo:
    """A decoding replaced whole (decoded on from a node of the beam tree), kept for Back to restore."""

    version: int  # the run's version right after the replacement: Back restores it only then
    session: DecodingSession
    before: Before | None
    beams: list[list]


@dataclass
class LoopState:
    """What the step loop keeps of a run."""

    beams: list[list] = field(default_factory=list)  # beam search's live beams at each step, when it ran
    before: Before | None = None
    undo: Undo | None = None  # the decoding Back restores, while the run is as a replacement left it
    ahead: tuple[int, DecodingSession] | None = None  # the next greedy step, decoded while the page showed this version


def loop(run: Run) -> LoopState:
    return run.states.get(LoopState)


def changed(run: Run, how: str = "any") -> None:
    """The run's session changed: `how` is "step" (one step more), "back" (one fewer) or "any"."""
    run.version += 1
    run.last_change = how
    loop(run).ahead = None


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


def interventions_key(session: DecodingSession) -> tuple:
    """What the session's interventions change, as a value to key a cache on: the heads ablated, and each edit's
    layer, heads, step and weights."""
    held = session.interventions
    if not held:
        return ()
    edits = tuple((e.layer, e.heads, e.step, tuple(e.weights.tolist())) for e in held.edits)
    return (tuple(sorted(held.ablate)), edits)


HOLDING = "{held} (Reset to undo)."  # interventions_status: the step loop's line while they last (loop.mjs too)
ABLATED = "ablated throughout: {heads}"  # interventions_text of an ablation alone (trust/in_page.mjs writes it too)


def interventions_text(run: Run) -> str:
    """The interventions the run's decoding holds, in words: "ablated throughout: …" or "edited: at step 3, … looked
    only at “x”; still ablated: …"; "" for none."""
    interventions: Interventions | None = run.session.interventions
    if not interventions:
        return ""
    config, pieces = run.pipeline.model.config, run.pipeline.tokenizer.tokens(run.session.src_ids)
    ablated = describe_heads(interventions.ablate, config) if interventions.ablate else ""
    if not interventions.edits:
        return ABLATED.format(heads=ablated)
    pointed: dict[tuple[int, tuple[int, ...]], set[Head]] = {}  # (step, source positions) -> the heads pointed there
    for edit in interventions.edits:
        where = (edit.step, tuple(edit.weights.nonzero().flatten().tolist()))
        pointed.setdefault(where, set()).update(Head("cross", edit.layer, h) for h in edit.heads)
    edits = [
        f"at step {step}, {describe_heads(heads, config)} looked only at “{word_label([pieces[p] for p in positions])}”"
        for (step, positions), heads in sorted(pointed.items())
    ]
    return "edited: " + "; ".join(edits) + (f"; still ablated: {ablated}" if ablated else "")


def interventions_status(run: Run) -> str:
    """The interventions the run's decoding holds, as the step loop says them while they last; "" for none."""
    text = interventions_text(run)
    return HOLDING.format(held=f"{text[0].upper()}{text[1:]}") if text else ""


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
        self.states = States()  # what each feature keeps for this user across runs
        self.early: Future | None = None  # the slow outputs of the last answer, being made (attention_lab.page.lab)
        self.seen: set[str] = {"attention"}  # the tabs the user opened in this session
        self.prepared: list[Future] = []  # what shut tabs would show, being made ahead (Feature.ahead)
        self.page_sent = 0  # the number of the newest decoding taken from the page (decoding/from_page.py)
        self.here: frozenset[str] = frozenset()  # the tabs the page draws itself now (their outputs are not made)

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

    def adopt(self, run: Run) -> None:
        """Make `run`, numbered by the page that decoded it, the session's run; the session's next numbers follow
        it, so no later run takes its number."""
        self._run = run
        self._serials = itertools.count(max(run.serial + 1, next(self._serials)))

    def __deepcopy__(self, memo) -> UserState:  # gradio copies the initial value into each new session
        return UserState()


def opened(user: UserState, tab: str) -> None:
    """The page opens `tab` with this answer (its outputs are drawn with it)."""
    user.tab = tab


def shown_step(session: DecodingSession, step: int | None) -> int:
    """The step to show (0 = before any output); None is the latest, and after a finished run the last word rather
    than the end-of-sentence token."""
    n = len(session.steps)
    if step is None:
        ends_with_eos = n > 1 and session.steps[-1].token == session.model.config.eos_id
        return n - 1 if ends_with_eos else n
    return max(0, min(int(step), n))
