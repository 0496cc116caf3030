"""The page as it is about to be drawn: what every tab's view reads."""

from __future__ import annotations

from dataclasses import dataclass, field

from ..controls import Controls
from ..decoding.run import Run
from ..snapshots.decodings import Snapshots


@dataclass
class Screen:
    """The user's run at the shown step, as the controls ask for it."""

    controls: Controls
    run: Run | None
    shown: int  # the step shown (0: before any output)
    max_len: int | None  # the max length the controls ask for
    snapshots: Snapshots  # the models' training snapshots, shared by every session
    surveys: dict[str, str] = field(default_factory=dict)  # model name -> the survey.json the user chose for it
