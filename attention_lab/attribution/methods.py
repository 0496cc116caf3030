"""Why the model wrote a token: its log-probability attributed to every source token and to every decoder input
before it (the start token and the tokens already written), by each method of METHODS, one line each: the three
Captum computes (attention_lab.attribution.captum) and value zeroing (attention_lab.attribution.value_zeroing). A
new method is a module of its own and a line here; the Why tab, the Trust tab, the deletion test and /attribute
offer every method of the table.

A positive value means the token raised the probability of what was written (see attention_lab.attribution.scorer
for what is read, and how a token's one number is made).
"""

from __future__ import annotations

from transformer import Interventions, Seq2SeqModel

from .captum import INPUT_X_GRADIENT, INTEGRATED_GRADIENTS, OCCLUSION
from .scorer import (
    AGGREGATE_TITLES,
    AGGREGATES,
    IG_STEPS,
    Method,
    Parts,
    Scorer,
    StepAttribution,
    check_aggregate,
    no_gradients,
    source_share,
)
from .value_zeroing import VALUE_ZEROING

METHODS: dict[str, Method] = {
    "input_x_gradient": INPUT_X_GRADIENT,
    "integrated_gradients": INTEGRATED_GRADIENTS,
    "occlusion": OCCLUSION,
    "value_zeroing": VALUE_ZEROING,
}
WORDS_NOTE = "In words, a word's value is the sum over its pieces."
__all__ = [  # what the method modules define, read from here by those who attribute
    "AGGREGATES",
    "AGGREGATE_TITLES",
    "IG_STEPS",
    "METHODS",
    "Method",
    "Scorer",
    "StepAttribution",
    "no_gradients",
    "source_share",
]


def titled(method: str, aggregate: str) -> str:
    """A method with its aggregate, as the Why tab titles it: "Input × gradient (L2)"."""
    return f"{METHODS[method].title} ({AGGREGATE_TITLES[aggregate]})"


def per_dimension(scorer: Scorer, step: int, method: str, ig_steps: int = IG_STEPS) -> tuple[Parts, float | None]:
    """What `method` (a key of METHODS) computes for step `step` (1-based), before it is aggregated (Captum's values
    per embedding dimension, (1, S, D) and (1, step, D)); and integrated gradients' convergence delta."""
    if method not in METHODS:
        raise ValueError(f"unknown attribution method {method!r}: use one of {', '.join(METHODS)}")
    return METHODS[method].parts(scorer, step, ig_steps)


def aggregated(parts: Parts, method: str, aggregate: str) -> tuple:
    """One number per token, (source (S,), prefix (T,)), from per_dimension's values, as AGGREGATES says."""
    check_aggregate(aggregate)
    return METHODS[method].reduce(parts, aggregate)


def attribute_step(
    scorer: Scorer, step: int, method: str, ig_steps: int = IG_STEPS, aggregate: str = "sum"
) -> StepAttribution:
    """Step `step`'s (1-based) written token attributed by `method` (a key of METHODS), aggregated by `aggregate`
    (a key of AGGREGATES); integrated gradients integrates over `ig_steps` points (its completeness gap, `delta`,
    shrinks as they grow)."""
    check_aggregate(aggregate)
    parts, delta = per_dimension(scorer, step, method, ig_steps)
    value = scorer.log_prob(step)
    source, prefix = aggregated(parts, method, aggregate)
    return StepAttribution(step, scorer.tokens[step - 1], source, prefix, value, delta)


def attribute(
    model: Seq2SeqModel,
    src_ids: list[int],
    tokens: list[int],
    method: str,
    steps: list[int] | None = None,
    limit: int | None = None,
    interventions: Interventions | None = None,
    cached: bool = False,
    ig_steps: int = IG_STEPS,
    aggregate: str = "sum",
) -> list[StepAttribution]:
    """Every step's written token attributed (or only `steps`, 1-based), for a decoding of `src_ids` that wrote
    `tokens` with the length limit `limit` and the interventions it held; `aggregate` as in attribute_step."""
    scorer = Scorer(model, src_ids, tokens, limit, interventions, cached)
    return [attribute_step(scorer, step, method, ig_steps, aggregate) for step in steps or range(1, len(tokens) + 1)]
