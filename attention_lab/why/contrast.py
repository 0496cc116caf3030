"""Why this token and not that one: contrastive attribution (Yin & Neubig 2022, "Interpreting Language Models with
Contrastive Explanations").

At a step of the decoding, what is attributed is logit(token written) − logit(alternative): the next-token logits
after the model's rules (what it may not write there is -inf), before log_softmax, so the normaliser, which both
share, cancels. The same methods and aggregations as attribution.py, through the same Scorer: only what it returns
differs. A positive value ("sum") pushed the model towards the token written rather than the alternative.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from transformer import Interventions, Seq2SeqModel

from ..attribution.methods import IG_STEPS, METHODS, Scorer, aggregated, check_aggregate, per_dimension


class ContrastError(ValueError):
    """A contrast that cannot be made: said in one line."""


class LogitDifference(Scorer):
    """logit(token written at a step) − logit(`alternative`) as a function of the embeddings (see Scorer)."""

    def __init__(self, model: Seq2SeqModel, src_ids: list[int], tokens: list[int], alternative: int, **options):
        super().__init__(model, src_ids, tokens, **options)
        self.alternative = alternative

    def score(self, logits: torch.Tensor, step: int) -> torch.Tensor:
        return logits[:, self.tokens[step - 1]] - logits[:, self.alternative]


@dataclass
class StepContrast:
    step: int  # 1-based
    token: int  # the token written at that step
    alternative: int
    source: np.ndarray  # (S,): one value per source token
    prefix: np.ndarray  # (step,): one value per decoder input at that step
    difference: float  # logit(token) − logit(alternative): what was attributed
    delta: float | None = None  # integrated gradients: sum of values − (difference − difference at the baseline)


def contrast_step(
    model: Seq2SeqModel,
    src_ids: list[int],
    tokens: list[int],
    step: int,
    alternative: int,
    method: str,
    aggregate: str = "l2",
    limit: int | None = None,
    interventions: Interventions | None = None,
    ig_steps: int = IG_STEPS,
    name: str = "",
) -> StepContrast:
    """Step `step` (1-based) of a decoding of `src_ids` that wrote `tokens`: logit(tokens[step-1]) −
    logit(alternative) attributed by `method`, aggregated by `aggregate` (attribution's METHODS and AGGREGATES).
    ContrastError if the step is not one of the decoding's, the alternative is the token written, or the model's
    rules forbid it there (`name`: how the message names the alternative)."""
    check_aggregate(aggregate)
    if method in METHODS and not METHODS[method].contrasts:
        raise ContrastError(
            f"{METHODS[method].title} reads log p, not the difference of two logits: contrast with another method."
        )
    if not 1 <= step <= len(tokens):
        raise ContrastError(f"Step must be from 1 to {len(tokens)}, this decoding's steps (got {step}).")
    if alternative == tokens[step - 1]:
        raise ContrastError(f"That is the token written at step {step}: contrast it with another candidate.")
    scorer = LogitDifference(model, src_ids, tokens, alternative, limit=limit, interventions=interventions)
    with torch.no_grad():
        difference = float(scorer(*scorer.inputs(step), step)[0])
    if not np.isfinite(difference):  # the rules give the alternative -inf here
        what = name or f"token {alternative}"
        raise ContrastError(f"The model may not write {what} at step {step} (its rules forbid it there).")
    parts, delta = per_dimension(scorer, step, method, ig_steps)
    source, prefix = aggregated(parts, method, aggregate)
    return StepContrast(step, tokens[step - 1], alternative, source, prefix, difference, delta)
