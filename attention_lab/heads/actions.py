"""Testing heads on a user's run: Ablate (heads removed throughout, the plain decoding kept beside) and an edit (at
the shown step, cross heads pointed at a clicked source word). Each changes the decoding through the step loop's
`replace` and returns the step the page should show."""

from __future__ import annotations

import re

from transformer import DecodingSession

from ..checks import InputError
from ..controls import Controls
from ..core.naming import parse_heads
from ..decoding.actions import DecodingActions, replace_decoding
from ..run.state import Before, Run, UserState, first_difference
from .ablation import ablated_session
from .editing import edit_session, point_weights
from .state import HeadsState


def plain_session(run: Run) -> DecodingSession | None:
    """The run's decoding without interventions, finished, if the run has one (an Ablate after a Run decodes once,
    not twice)."""
    plain = run.states.get(HeadsState).plain or run.session
    unchanged = not plain.interventions and not any(s.forced for s in plain.steps)
    return plain if plain.finished and unchanged else None


class HeadTests:
    """Ablation and editing, started from the page's controls."""

    def __init__(self, decoding: DecodingActions) -> None:
        self.decoding = decoding

    def ablate(self, user: UserState, c: Controls, heads: object) -> None:
        """Decode with `heads` ablated throughout, beside the plain decoding; per step, what the ablation changed."""
        run = self.decoding.current(user, c)
        chosen = parse_heads(heads, run.pipeline.model.config)  # checked first: a bad choice changes nothing
        state = run.states.get(HeadsState)
        plain = plain_session(run)
        if plain is None:
            plain = self.decoding.start(c).session
            plain.run()
        if not chosen:  # nothing ablated: the plain decoding, as Run gives it
            replace_decoding(run, plain, None)
            state.plain, state.ablated = None, None
            return
        ablated = ablated_session(plain, chosen)
        replace_decoding(
            run, ablated, Before(list(plain.steps), first_difference(plain.steps, ablated.steps), "ablation")
        )
        state.plain, state.ablated = plain, chosen

    def edit(self, user: UserState, c: Controls, picked: object, heads: object) -> int:
        """At the shown step, point the chosen cross heads at the clicked source word (its pieces share weight 1),
        and decode on greedily with no further edit; the decoding before stays beside it."""
        run = user.run
        if run is None or not run.session.steps:
            raise InputError("Decode a step first, then click a source word to edit the attention at that step.")
        session = run.session
        chosen = parse_heads(heads, session.model.config, kinds=("cross",))
        if not chosen:
            raise InputError("Choose the cross-attention heads to edit first (or all of them).")
        positions = [int(p) for p in re.findall(r"\d+", str(picked))]
        if not positions or max(positions) >= len(session.src_ids):
            raise InputError("Click one of the source words shown for this step.")
        step = max(1, min(int(c.shown or 1), len(session.steps)))
        edited = edit_session(session, step, point_weights(len(session.src_ids), positions), chosen)
        state = run.states.get(HeadsState)
        if state.plain is None:
            state.plain = session
        state.ablated = None  # the chart described an ablation's steps, not these
        replace_decoding(run, edited, Before(list(session.steps), step, "edit"))
        return step
