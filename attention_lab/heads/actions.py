"""Testing heads on a user's run: Ablate (heads removed throughout, the plain decoding kept beside) and an edit (at
the shown step, cross heads pointed at a clicked source word). Each returns the step the page should show."""

from __future__ import annotations

import re

from ..attention.units import word_label
from ..checks import InputError
from ..controls import Controls
from ..decoding.actions import Decoding
from ..decoding.state import Before, Run, UserState, asks_for, first_difference
from .ablation import ablated_session
from .editing import edit_session, point_weights
from .naming import describe_heads, parse_heads
from .state import HeadsState


class HeadTests:
    """Ablation and editing, started from the page's controls."""

    def __init__(self, decoding: Decoding) -> None:
        self.decoding = decoding

    def plain(self, user: UserState, c: Controls) -> Run:
        """The controls' source decoded greedily to the end with no intervention: the user's own, when it is that
        (an Ablate after a Run decodes once, not twice), else decoded now."""
        run = user.run
        if run is not None and asks_for(run, c, self.decoding.max_len(c)):
            plain = run.plain or run.session
            if plain.finished and not plain.interventions and not any(s.forced for s in plain.steps):
                return Run(run.entry, run.text, plain, run.top_k, run.max_len, run.notice)
        plain = self.decoding.start(c)
        plain.session.run()
        return plain

    def ablate(self, user: UserState, c: Controls, heads: object) -> None:
        """Decode with `heads` ablated throughout, beside the plain decoding; per step, what the ablation changed."""
        plain = self.plain(user, c)
        session = plain.session
        chosen = parse_heads(heads, session.model.config)
        if not chosen:  # nothing ablated: the plain decoding, as Run gives it
            user.run = plain
            return
        ablated = ablated_session(session, chosen)
        run = Run(plain.entry, c.source, ablated, plain.top_k, plain.max_len, plain.notice)
        run.before = Before(list(session.steps), first_difference(session.steps, ablated.steps), "ablation")
        run.plain = session
        run.held = f"Ablated throughout: {describe_heads(chosen, session.model.config)} (Reset to undo)."
        run.state("heads", HeadsState).ablated = chosen
        user.run = run

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
        word = word_label(run.pipeline.tokenizer.tokens([session.src_ids[p] for p in positions]))
        config = session.model.config
        held = session.interventions.ablate if session.interventions else None
        run.before = Before(list(session.steps), step, "edit")
        run.held = (
            f"Edited: at step {step}, {describe_heads(chosen, config)} looked only at “{word}”"
            + (f"; still ablated: {describe_heads(held, config)}" if held else "")
            + " (Reset to undo)."
        )
        if run.plain is None:
            run.plain = session
        run.session = edited
        run.state("heads", HeadsState).ablated = None  # the chart described an ablation's steps, not these
        run.changed()
        return step
