"""What the Why tab's page modules are sent: the decoding's attribution and lens (why.mjs, lens.mjs), a contrast
(contrast.mjs) and the DecoderLens of the source (decoderlens.mjs), as typed records."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Annotated, Literal

from transformer.decoderlens import decoderlens
from transformer.lens import decoder_lens

from ..attribution.methods import StepAttribution
from ..core.units import token_label
from ..decoding.messages import Key
from ..messages import OMITTED
from ..page_copy.attribution import LENS_TOP_K


@dataclass
class Notes:
    method: str  # the method's and the aggregate's choices
    words: str  # how a word's value is made of its pieces'
    agreement: str  # what the agreement grids show


@dataclass
class WhyStep:
    source: list[float]  # a value per source token, 4 significant figures (a near-certain step's are tiny)
    prefix: list[float]  # a value per decoder input at the step
    source_share: float | None
    log_prob: float  # what was attributed
    gap: Annotated[float | None, OMITTED] = None  # integrated gradients: the sum's distance from the change in log p
    total: Annotated[float | None, OMITTED] = None  # integrated gradients: the sum of the values


@dataclass
class LensData:
    layers: int
    # [step][layer][rank]: label, probability; not the tokens the model may not write there (probability 0: which of
    # them the top few hold is arbitrary)
    top: list[list[list[tuple[str, float]]]]
    written: list[list[float]]  # [step][layer]: the probability of the token written
    settled: list[int | None]  # per step, the layer (1-based) from which on it is the top one


@dataclass
class Why:
    key: Key  # the decoding it attributed
    method: str
    aggregate: str
    title: str
    notes: Notes
    tokens: list[int]  # the tokens it attributed
    steps: list[WhyStep] = field(default_factory=list)
    lens: LensData | None = None
    error: Annotated[str | None, OMITTED] = None
    op: Literal["why"] = "why"


@dataclass
class DecoderLensText:
    layer: int  # 0: the embeddings entering encoder layer 1; the last: the model's own greedy output
    tokens: list[str]  # as labelled, the end token last if written within the limit
    text: str
    ended: bool  # whether it wrote the end token within the limit


@dataclass
class DecoderLensData:
    layers: list[DecoderLensText]  # in order, layer 0 first
    limit: int  # the most tokens each decoding could write
    error: Annotated[str | None, OMITTED] = None
    op: Literal["decoderlens"] = "decoderlens"


@dataclass
class ContrastNotes:
    method: str
    aggregate: str


@dataclass
class ContrastMessage:
    step: int  # 1-based
    tokens: list[int]  # the tokens written up to the step when it was asked
    alternative: str  # as labelled
    token_id: int  # the alternative's
    title: str
    aggregate: str
    notes: ContrastNotes
    error: Annotated[str | None, OMITTED] = None
    difference: Annotated[float | None, OMITTED] = None  # logit(token written) - logit(alternative)
    source: Annotated[list[float] | None, OMITTED] = None
    prefix: Annotated[list[float] | None, OMITTED] = None
    op: Literal["contrast"] = "contrast"


def significant(values) -> list[float]:
    """Four significant figures: a near-certain step's gradients are tiny, and must not round to zero."""
    return [float(f"{float(v):.4g}") for v in values]


def why_step(a: StepAttribution) -> WhyStep:
    share = a.source_share
    step = WhyStep(
        significant(a.source),
        significant(a.prefix),
        None if math.isnan(share) else round(share, 4),
        round(a.log_prob, 5),
    )
    if a.delta is not None and math.isfinite(a.delta):  # integrated gradients: how far the sum is from the change
        step.gap, step.total = round(a.delta, 5), round(float(a.source.sum() + a.prefix.sum()), 5)
    return step


def lens_data(model, tokenizer, src_ids: list[int], tokens: list[int], limit: int, interventions) -> LensData:
    """The lens for the page: per step and layer the top tokens, the probability of the token written, and the
    layer (1-based) where it settles."""
    lens = decoder_lens(model, src_ids, tokens, LENS_TOP_K, limit, interventions)
    special = model.special_ids
    return LensData(
        layers=lens.top_ids.size(0),
        top=[
            [
                [(token_label(tokenizer, int(i), special), round(float(p), 4)) for i, p in zip(ids, probs) if p > 0]
                for ids, probs in zip(lens.top_ids[:, t].tolist(), lens.top_probs[:, t].tolist())
            ]
            for t in range(len(tokens))
        ],
        written=[[round(float(p), 4) for p in lens.written_probs[:, t]] for t in range(len(tokens))],
        settled=[None if s is None else s + 1 for s in lens.settled],
    )


def decoderlens_data(model, tokenizer, src_ids: list[int], limit: int, interventions) -> DecoderLensData:
    """The DecoderLens for the page: per encoder layer (0: the embeddings), what the decoder writes greedily from it."""
    special, eos = model.special_ids, model.config.eos_id
    layers = [
        DecoderLensText(
            out.layer,
            [token_label(tokenizer, t, special) for t in out.tokens],
            tokenizer.decode(out.tokens),
            bool(out.tokens) and out.tokens[-1] == eos,
        )
        for out in decoderlens(model, src_ids, limit, interventions)
    ]
    return DecoderLensData(layers, limit)
