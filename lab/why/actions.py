"""What the Why tab's button does to a user's run."""

from __future__ import annotations

from ..checks import InputError
from ..controls import Controls
from ..decoding.run import UserState


def ask_deletion(user: UserState, c: Controls) -> int | None:
    """Ask for the deletion test on the run's source (the tab then shows it, filled after the click); the step
    shown stays."""
    if user.run is None:
        raise InputError("Run a source first, then run the deletion test on it.")
    user.run.deletion_asked = True
    return user.shown
