"""What the step loop shows of a user's run, after every event whatever tab is open: the output, the notice, whether
Step and Back can be clicked, the decoding before a what-if, and the decoding itself, sent to the page once and then a
step more or fewer (attention_lab.decoding.messages), from which the page draws every view."""

from __future__ import annotations

from ..controls import Controls
from ..feature import BUTTON, DATA, NOTICE, TEXT, TITLED, Output, Screen
from ..run.state import Run, asks_for, interventions_status, loop
from .actions import BEAM_MODE, FINISHED
from .messages import Key, message
from .messages import key as decoding_key

OUTPUTS = (
    Output("output", TEXT),
    Output("status", NOTICE),
    Output("step", BUTTON),
    Output("back", BUTTON),
    Output("original", TITLED),
    Output("steps", DATA),  # the decoding's messages, to the component that takes them in (steps.mjs)
)


def view(s: Screen) -> dict:
    """Every output of the step loop, as name -> (key, how to make it)."""
    run, c = s.run, s.controls
    beam_note = BEAM_MODE if c.strategy == "beam" else ""
    drawn = s.user.drawn.get("steps")
    page_key = (drawn[0] or None) if drawn else None  # a Key, or None (nothing, or the blank's "")
    if run is None:
        return blank(beam_note, page_key)
    session, tokenizer = run.session, run.pipeline.tokenizer
    status = " ".join(
        filter(None, [run.notice, interventions_status(run), FINISHED if session.finished else "", beam_note])
    )
    n, output = len(session.steps), tokenizer.decode(session.tokens)
    can_step = not beam_note and (not session.finished or not asks_for(run, c, s.max_len))
    before = loop(run).before
    original = tokenizer.decode(step.token for step in before.steps) if before else None
    titled = {"value": original, "label": f"Before the {before.change}" if before else ""}
    return {
        "output": (output, lambda: output),
        "status": (status, lambda: status),
        "step": (can_step, lambda: can_step),
        "back": (n > 0, lambda: n > 0),
        "original": ((original, titled["label"]), lambda: titled),
        "steps": ((decoding_key(run), s.shown), lambda: message(run, page_key, s.shown)),
    }


def blank(beam_note: str, page_key: Key | None) -> dict:
    """Nothing decoded; `page_key`: the decoding the page held (the Clear is sent after it)."""
    return {
        "output": ("", lambda: ""),
        "status": (beam_note, lambda: beam_note),
        "step": (not beam_note, lambda: not beam_note),
        "back": (False, lambda: False),
        "original": (None, lambda: None),
        "steps": (("", 0), lambda: message(None, page_key, 0)),
    }


def goes_on(run: Run | None, c: Controls, max_len: int | None) -> bool:
    """Whether a Step would go on with this run (a next step to decode ahead)."""
    return run is not None and c.strategy != "beam" and not run.session.finished and asks_for(run, c, max_len)
