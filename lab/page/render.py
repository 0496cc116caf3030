"""What the page must change after an action: every output the page shows now, by name, with a key that says when
two values are equal; only the outputs whose key differs from what the user's page shows are sent. So a Step sends
the open tab's grown view and the step's now-view, never the encoder, and a closed tab is drawn when it is opened.
"""

from __future__ import annotations

from ..attention.drawing import Drawing, Look
from ..controls import Controls
from ..decoding.actions import BEAM_MODE, FINISHED
from ..decoding.run import UserState, asks_for, shown_step
from ..snapshots.decodings import Snapshots
from .screen import Screen
from .tabs import BY_ID


def changes(user: UserState, c: Controls, shown: int | None, snapshots: Snapshots, max_len: int | None) -> dict:
    """The outputs whose value changed, name -> new value, for the user's run at step `shown` (None: the latest)."""
    found = {}
    for name, (key, make) in wanted(user, c, shown, snapshots, max_len).items():
        if user.drawn.get(name, ()) != key:
            found[name] = make()
            user.drawn[name] = key
    return found


def wanted(user: UserState, c: Controls, shown: int | None, snapshots: Snapshots, max_len: int | None) -> dict:
    """Every output the page shows now, as name -> (key, how to make it): the decoding's, and the open tab's."""
    run, look = user.run, Look.of(c)
    beam_note = BEAM_MODE if c.strategy == "beam" else ""
    tab = BY_ID[user.tab]
    if run is None:
        screen = Screen(c, look, None, 0, None, (), max_len, snapshots)
        outputs = _blank(beam_note)
        if tab.needs_run:
            outputs.update({output.name: (None, lambda: None) for output in tab.outputs})
            return outputs
        return {**outputs, **tab.view(screen)}
    session, tokenizer = run.session, run.pipeline.tokenizer
    shown = user.shown = shown_step(session, shown)
    at = (run.serial, run.version, shown)
    screen = Screen(c, look, run, shown, Drawing.of(session, tokenizer, look), at, max_len, snapshots)
    status = " ".join(filter(None, [run.notice, run.held, FINISHED if session.finished else "", beam_note]))
    n, output = len(session.steps), tokenizer.decode(session.tokens)
    # Step goes on with this run, or starts a new one for an edited source: off only when this one has finished
    can_step = not beam_note and (not session.finished or not asks_for(run, c, max_len))
    original = tokenizer.decode(s.token for s in run.original) if run.original else None
    before = {"value": original, "label": f"Before the {run.change}"}
    return {
        "output": (output, lambda: output),
        "status": (status, lambda: status),
        "shown": ((shown, n), lambda: {"value": shown, "maximum": max(n, 1), "interactive": n > 0}),
        "step": (can_step, lambda: can_step),
        "back": (n > 0, lambda: n > 0),
        "now": ((*at, look), lambda: screen.drawing.now(shown)),
        "candidates": ((*at, look.words), lambda: screen.drawing.top_k(shown)),
        "original": ((original, run.change), lambda: before),
        **tab.view(screen),
    }


def _blank(beam_note: str) -> dict:
    return {
        "output": ("", lambda: ""),
        "status": (beam_note, lambda: beam_note),
        "shown": ((0, 0), lambda: {"value": 0, "maximum": 1, "interactive": False}),
        "step": (not beam_note, lambda: not beam_note),
        "back": (False, lambda: False),
        "now": (None, lambda: None),
        "candidates": (None, lambda: None),
        "original": (None, lambda: None),
    }
