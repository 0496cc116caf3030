"""What the page is sent about a user's run: its whole attention once, then a step more or a step fewer (see
attention_lab.core.payload). The page draws every view from what it holds; the key says which decoding that is.

Messages, each with the key of the decoding it leaves the page with and the step to show:
    Full    a decoding to draw afresh
    More    one step more, for a page that holds `after`
    Fewer   the first `steps` steps kept, for a page that holds `after`
    Show    the same decoding, another step shown
    Clear   nothing decoded (no key), after the decoding the page held, when it held one
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Literal

from ..core import payload
from ..core.payload import Decoding, Piece, StepData
from ..messages import OMITTED
from ..run.state import Run, loop


@dataclass(frozen=True)
class Key:
    """Which decoding: the run's number in the user's session, and how many times it changed."""

    serial: int
    version: int


@dataclass
class Full:
    key: Key
    shown: int
    data: Decoding
    op: Literal["full"] = "full"


@dataclass
class More:
    key: Key
    after: Key
    shown: int
    step: StepData
    out: Piece
    cross_norms: str | None  # the cross values' norms, with the first step
    op: Literal["step"] = "step"


@dataclass
class Fewer:
    key: Key
    after: Key
    shown: int
    steps: int
    op: Literal["back"] = "back"


@dataclass
class Show:
    key: Key
    shown: int
    op: Literal["show"] = "show"


@dataclass
class Clear:
    key: None = None
    shown: int = 0
    op: Literal["clear"] = "clear"
    # what it clears: two clears, each of a decoding the page made itself in between, are two messages (gradio
    # passes a drawn component no value equal to the one it holds)
    after: Annotated[Key | None, OMITTED] = None


MESSAGES = (Full, More, Fewer, Show, Clear)


def key(run: Run | None) -> Key | None:
    return None if run is None else Key(run.serial, run.version)


def message(run: Run | None, held: Key | None, shown: int) -> Full | More | Fewer | Show | Clear:
    """The message that brings a page holding the decoding `held` (a key, or None) to `run`, shown at step `shown`:
    a step more or fewer when that is all that changed since, the whole decoding otherwise."""
    if run is None:
        return Clear(after=held)
    session, tokenizer, now = run.session, run.pipeline.tokenizer, key(run)
    if held == now:
        return Show(now, shown)
    follows = held == Key(run.serial, run.version - 1)
    if follows and run.last_change == "step" and session.steps:
        delta = payload.step_delta(session, tokenizer)
        return More(now, held, shown, delta.step, delta.out, delta.cross_norms)
    if follows and run.last_change == "back":
        return Fewer(now, held, shown, len(session.steps))
    return Full(now, shown, payload.full(session, tokenizer, run.entry.name, loop(run).before))
