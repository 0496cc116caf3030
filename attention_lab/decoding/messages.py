"""What the page is sent about a user's run: its whole attention once, then a step more or a step fewer (see
attention_lab.attention.payload). The page draws every view from what it holds; the key says which decoding that is."""

from __future__ import annotations

from ..attention import payload
from .state import Run, loop


def key(run: Run | None) -> str:
    return "" if run is None else f"{run.serial}.{run.version}"


def message(run: Run | None, held: str | None, shown: int) -> dict:
    """The message that brings a page holding the decoding `held` (a key, or None) to `run`, shown at step `shown`:
    a step more or fewer when that is all that changed since, the whole decoding otherwise."""
    if run is None:
        return {"op": "clear", "key": "", "shown": 0}
    session, tokenizer, now = run.session, run.pipeline.tokenizer, key(run)
    if held == now:
        return {"op": "show", "key": now, "shown": shown}
    follows = held == f"{run.serial}.{run.version - 1}"
    if follows and run.last_change == "step" and session.steps:
        return {"op": "step", "key": now, "after": held, "shown": shown, **payload.step_delta(session, tokenizer)}
    if follows and run.last_change == "back":
        return {"op": "back", "key": now, "after": held, "shown": shown, "steps": len(session.steps)}
    data = payload.full(session, tokenizer, run.entry.name, loop(run).before)
    return {"op": "full", "key": now, "shown": shown, "data": data}
