"""What the Heads tab shows of a user's run: every head summarised and tested, and what an ablation changed.

Both are slow (every head ablated in turn; the ablation's effect on every step), so each is made by a function that
takes what it needs from the run when it is asked for, and can then run while the user goes on clicking.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from functools import partial

from ..attention.units import token_label
from ..decoding.run import Run
from . import figures
from .ablation import ablation_effects, importance
from .summaries import head_summaries

NOTE = (
    "Every head of every kind, summarised over this decoding; click a cell to focus that head in its view. "
    "Attention weights alone do not say what a head does (Jain & Wallace 2019; Wiegreffe & Pinter 2019), so the last "
    "row *tests* each head: it is removed from the real forward pass and the next-token distribution compared. Below, "
    "ablate any set of heads and see, step by step, what changes."
)


def summary_key(run: Run) -> tuple:
    """What the summary depends on: the model, the source and the plain decoding's tokens (an Ablate decodes the
    same plain tokens again, and does not redraw it)."""
    summarised = run.base or run.session
    return (run.entry.name, tuple(run.session.src_ids), tuple(summarised.tokens))


def summary(run: Run) -> Callable:
    """How to draw the summary of the decoding without interventions (after an ablation or edit, the one before
    it), as it stands now: later steps of the run change nothing in it."""
    session = copy.copy(run.base or run.session)
    session.steps = list(session.steps)
    alignment = run.entry.alignment

    def draw():
        if not session.steps:
            return None
        summaries = head_summaries(session, alignment)
        tokens = [s.token for s in session.steps]
        grid = importance(session.model, session.src_ids, tokens, session.max_new_tokens)
        return figures.summary_figure(
            summaries, grid, "Every head, over this source's decoding without ablations or edits"
        )

    return draw


def effects(run: Run) -> Callable:
    """How to draw, per step of the decoding before the last ablation, what the ablation changed (a hint while
    there is none)."""
    if not run.ablated or run.original is None:
        return figures.no_effects
    model, src_ids, limit = run.session.model, list(run.session.src_ids), run.session.max_new_tokens
    tokens, heads, held = [s.token for s in run.original], run.ablated, run.held
    label = partial(token_label, run.pipeline.tokenizer, special_ids=model.special_ids)
    return lambda: figures.effects_figure(ablation_effects(model, src_ids, tokens, heads, 3, limit), label, held)
