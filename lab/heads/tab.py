"""What the Heads tab shows of a user's run: every head summarised and tested, and what an ablation changed."""

from __future__ import annotations

from functools import partial

from ..attention.units import token_label
from ..decoding.run import Run
from . import figures
from .ablation import importance
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


def summary(run: Run):
    """The summary of the decoding without interventions (after an ablation or edit, the one before it)."""
    session = run.base or run.session
    if not session.steps:
        return None
    summaries = head_summaries(session, run.entry.alignment)
    tokens = [s.token for s in session.steps]
    grid = importance(session.model, session.src_ids, tokens, session.max_new_tokens)
    return figures.summary_figure(summaries, grid, "Every head, over this source's decoding without ablations or edits")


def effects(run: Run):
    """Per step of the original decoding, what the last ablation changed; a hint while there is none."""
    if not run.effects:
        return figures.no_effects()
    label = partial(token_label, run.pipeline.tokenizer, special_ids=run.session.model.special_ids)
    return figures.effects_figure(run.effects, label, run.held)
