"""What the page must change after an action: every output the page shows now, by name, with a key that says when
two values are equal; only the outputs whose key differs from what the user's page shows are sent. The decoding
goes as a message that brings the page from what it holds to the run (a step more, a step fewer, or all of it), and
the page draws the step's views and the attention tabs from it. A slow output answers with a placeholder, and
`to_fill` gets a new value, whose change event fills it (Lab.fill), so the click does not wait for it.
"""

from __future__ import annotations

from ..controls import Controls
from ..decoding.actions import BEAM_MODE, FINISHED
from ..decoding.messages import key as decoding_key
from ..decoding.messages import message
from ..decoding.run import UserState, asks_for, shown_step
from ..snapshots.decodings import Snapshots
from .screen import Screen
from .tabs import BY_ID, SLOW, placeholder

PENDING = "pending"  # what the page shows of a slow output until fill sends it


def changes(user: UserState, c: Controls, shown: int | None, snapshots: Snapshots, max_len: int | None) -> dict:
    """The outputs whose value changed, name -> new value, for the user's run at step `shown` (None: the latest);
    a slow one as its placeholder."""
    found, waiting = {}, False
    for name, (key, make) in wanted(user, c, shown, snapshots, max_len).items():
        drawn = user.drawn.get(name, ())
        if drawn == key:
            continue
        if name in SLOW and key is not None:  # a None key: nothing to compute (no run, or a hint), sent at once
            # Already waiting for this very value: its placeholder is not sent again (it could reach the page after
            # the fill that answers it, and stay), but a fill is asked for again (one made while the tab was shut
            # left it waiting).
            if drawn != (PENDING, key):
                found[name], user.drawn[name] = placeholder(name), (PENDING, key)
            waiting = True
        else:
            found[name], user.drawn[name] = make(), key
    if waiting:
        user.fills += 1
        found["to_fill"] = str(user.fills)  # its change asks for them
    user.answered = c
    return found


def pending(user: UserState, c: Controls, snapshots: Snapshots, max_len: int | None) -> dict:
    """The slow outputs still to send, name -> (key, how to make it); taken under the user's lock, made after."""
    wanted_now = wanted(user, c, user.shown, snapshots, max_len)
    return {
        name: wanted_now[name]
        for name, drawn in user.drawn.items()
        if name in SLOW and name in wanted_now and drawn == (PENDING, wanted_now[name][0])
    }


def wanted(user: UserState, c: Controls, shown: int | None, snapshots: Snapshots, max_len: int | None) -> dict:
    """Every output the page shows now, as name -> (key, how to make it): the decoding's, and the open tab's."""
    run = user.run
    beam_note = BEAM_MODE if c.strategy == "beam" else ""
    tab = BY_ID[user.tab]
    held = user.drawn.get("decoding")
    held = held[0] if held else None
    if run is None:
        outputs = _blank(beam_note)
        if tab.in_page:
            return outputs
        if tab.needs_run:
            return {**outputs, **{output.name: (None, lambda: None) for output in tab.outputs}}
        return {**outputs, **tab.view(Screen(c, None, 0, max_len, snapshots, user.surveys))}
    session, tokenizer = run.session, run.pipeline.tokenizer
    shown = user.shown = shown_step(session, shown)
    status = " ".join(filter(None, [run.notice, run.held, FINISHED if session.finished else "", beam_note]))
    n, output = len(session.steps), tokenizer.decode(session.tokens)
    # Step goes on with this run, or starts a new one for an edited source: off only when this one has finished
    goes_on = asks_for(run, c, max_len)
    can_step = not beam_note and (not session.finished or not goes_on)
    ahead = decoding_key(run) if not beam_note and not session.finished and goes_on else ""
    original = tokenizer.decode(s.token for s in run.original) if run.original else None
    before = {"value": original, "label": f"Before the {run.change}"}
    outputs = {
        "output": (output, lambda: output),
        "status": (status, lambda: status),
        "shown": ((shown, n), lambda: {"value": shown, "maximum": max(n, 1), "interactive": n > 0}),
        "step": (can_step, lambda: can_step),
        "back": (n > 0, lambda: n > 0),
        "original": ((original, run.change), lambda: before),
        "decoding": ((decoding_key(run), shown), lambda: message(run, held, shown)),
        "to_step": (ahead, lambda: ahead),
    }
    if tab.in_page:
        return outputs
    return {**outputs, **tab.view(Screen(c, run, shown, max_len, snapshots, user.surveys))}


def _blank(beam_note: str) -> dict:
    return {
        "output": ("", lambda: ""),
        "status": (beam_note, lambda: beam_note),
        "shown": ((0, 0), lambda: {"value": 0, "maximum": 1, "interactive": False}),
        "step": (not beam_note, lambda: not beam_note),
        "back": (False, lambda: False),
        "original": (None, lambda: None),
        "decoding": (("", 0), lambda: message(None, None, 0)),
        "to_step": ("", lambda: ""),
    }
