"""Value zeroing (Mohebbi et al. 2023, "Quantifying Context Mixing in Transformers") as an attribution method: a
source token's value vector zeroed in every cross-attention head, or a decoder input's in every decoder
self-attention head, and the value is how far log p of the token written falls (transformer.value_zeroing, through
the hook points). One number per token, as occlusion's: "sum" keeps its sign, "l2" takes its size. It reads log p,
not the logit difference a contrast attributes."""

from __future__ import annotations

import numpy as np

from transformer.value_zeroing import value_zeroing

from .scorer import IG_STEPS, Method, Parts, Scorer, check_aggregate


def _zeroed(scorer: Scorer, step: int, ig_steps: int = IG_STEPS) -> tuple[Parts, None]:
    found = value_zeroing(
        scorer.model,
        scorer.src_ids,
        scorer.tokens,
        steps=[step],
        limit=scorer.limit,
        interventions=scorer.interventions,
    )[0]
    return (found.source_fall.double().cpu().numpy(), found.prefix_fall.double().cpu().numpy()), None


def _fall(parts: Parts, aggregate: str) -> tuple[np.ndarray, np.ndarray]:
    check_aggregate(aggregate)
    source, prefix = parts
    return (source, prefix) if aggregate == "sum" else (np.abs(source), np.abs(prefix))


VALUE_ZEROING = Method(
    "Value zeroing",
    "Value zeroing: a token's value vector zeroed in every cross head (a source token) or every decoder self head "
    "(a decoder input), its attention weights kept; the value is how far log p(token written) falls.",
    _zeroed,
    _fall,
    contrasts=False,
)
