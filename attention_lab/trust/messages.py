"""A scored translation as JSON: the /score answer and the Trust tab's message, and the translation's tokens as the
model's target side writes them."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from transformer import Seq2SeqPipeline

from ..attribution.methods import METHODS, no_gradients
from ..checks import InputError, quoted
from ..core.units import word_label
from ..run.target import target_ids as translation_ids
from .score import ALTI, Score, score

MAX_TRANSLATION = 128  # tokens forced, the end token included: each step costs a method's pass
WHO = "/score"  # what takes a translation, as its refusals name it (run.target)
TITLES = {ALTI: "ALTI+", **{name: m.title for name, m in METHODS.items()}}
NOTES = {
    ALTI: "ALTI+ (Ferrando et al. 2022): how much each source token and each decoder input contributes to the "
    "prediction, through every layer (its norms and residuals included); the values are non-negative and add up "
    "to 1.",
    **{name: m.note for name, m in METHODS.items()},
}


def checked_method(method: object) -> str:
    """`method` if it is one /score knows, else InputError naming them."""
    if not isinstance(method, str) or method not in TITLES:
        raise InputError(f"Unknown method {quoted(method)}: use one of {', '.join(TITLES)}.")
    return method


def target_ids(pipeline: Seq2SeqPipeline, text: str) -> list[int]:
    """`text` as the model's target side tokenizes it, its end token last, at most MAX_TRANSLATION tokens
    (attention_lab.run.target)."""
    return translation_ids(pipeline, text, MAX_TRANSLATION, who=WHO)


def _number(value: float, decimals: int = 6) -> float | None:
    """A value for JSON: null where it is not a finite number (log p = -inf, no values)."""
    return round(float(value), decimals) if math.isfinite(value) else None


def _numbers(values: np.ndarray) -> list[float | None]:
    return [_number(v) for v in values]


@dataclass
class ScoredStep:
    step: int
    token: str
    logp: float | None  # null: the model's rules forbid the token there (log p = -inf)
    source_share: float | None
    source: list[float | None]  # a value per source token (null where the method gives none)
    prefix: list[float | None]  # a value per decoder input


@dataclass
class Sentence:
    mean_logp: float | None
    source_share: float | None
    coverage: float | None
    uncovered: list[str]  # the source words cross-attention barely read
    wass_to_unif: list[float | None]  # per decoder layer (attention_lab.trust.wasserstein)
    wass_to_data: list[float | None]  # per decoder layer; nulls for a model without correct translations to compare
    wass_combo: float | None  # the last decoder layer's; null likewise


@dataclass
class FlagRecord:
    kind: str  # "forbidden", "uncovered", "low_source" or "end_collapse"
    at: int  # 1-based: the step, or for "uncovered" the source word
    message: str


@dataclass
class ScoreRecord:
    """A translation scored token by token (/score's answer, and what the Trust tab draws)."""

    source_tokens: list[str]
    target_tokens: list[str]
    method: str
    steps: list[ScoredStep]
    sentence: Sentence
    flags: list[FlagRecord]


def record(pipeline: Seq2SeqPipeline, scored: Score) -> ScoreRecord:
    """`scored` as its record; null for a log p of -inf and for values a method does not give."""
    tokenizer = pipeline.tokenizer
    pieces = tokenizer.tokens(scored.src_ids)
    steps = [
        ScoredStep(
            step=s.step,
            token=tokenizer.id_to_token(s.token),
            logp=_number(s.logp),
            source_share=_number(s.source_share),
            source=_numbers(s.source),
            prefix=_numbers(s.prefix),
        )
        for s in scored.steps
    ]
    sentence = Sentence(
        mean_logp=_number(scored.mean_logp),
        source_share=_number(scored.source_share),
        coverage=_number(scored.coverage),
        uncovered=[word_label([pieces[p] for p in scored.words[w]]) for w in scored.uncovered],
        wass_to_unif=_numbers(scored.wass_to_unif),
        wass_to_data=_numbers(scored.wass_to_data),
        wass_combo=_number(scored.wass_combo),
    )
    flags = [FlagRecord(f.kind, f.at, f.message) for f in scored.flags]
    return ScoreRecord(pieces, tokenizer.tokens(scored.tokens), scored.method, steps, sentence, flags)


def score_record(
    pipeline: Seq2SeqPipeline, src_ids: list[int], tokens: list[int], method: str, **options
) -> ScoreRecord:
    """`tokens` scored by `method` as the /score answer; InputError for a model autograd cannot differentiate."""
    checked_method(method)
    try:
        scored = score(pipeline, src_ids, tokens, method, **options)
    except RuntimeError as err:  # a model whose forward pass autograd cannot differentiate
        raise InputError(no_gradients(err)) from err
    except (ValueError, TypeError) as err:  # a model whose sublayers ALTI+ cannot read
        raise InputError(f"This model cannot be scored by ALTI+: {err}") from err
    return record(pipeline, scored)
