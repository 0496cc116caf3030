"""Why the model wrote a token: its log-probability attributed to every source token and to every decoder input
before it (the start token and the tokens already written), by three methods that Captum computes.

A token's input is its embedding as the model reads it, before positions are added (Seq2SeqModel.embed_source and
embed_target); Captum differentiates or perturbs those vectors through the model's real forward pass. What each
method's choices are is said in METHODS, in one line each, on the page and in the API's docs:
- input × gradient: e · ∂ log p / ∂e, summed over the embedding's dimensions;
- integrated gradients: from the baseline of zero embeddings (every position kept, no token's identity) to the real
  ones, 50 Gauss-Legendre steps, summed over dimensions: the values add up to log p(input) - log p(baseline) as the
  steps grow (completeness). At 50 the gap can be a tenth of the change on a trained model, whose log p climbs
  steeply part of the way; Captum's convergence delta says how far it is, and the page shows it;
- occlusion: one token's embedding set to zero, the fall in log p (the token's information removed, its position
  kept).
Each method gives Captum's values per embedding dimension; AGGREGATES says how a token's one number is made of them:
"sum" (signed, the default: a positive value raised the probability) or "l2" (the L2 norm over the dimensions,
unsigned: how much the token matters, not which way). Occlusion's value is one number per token already (the fall,
which Captum gives every dimension): "sum" keeps it, "l2" takes its size |fall| (the norm over the dimensions would
be |fall|·√D, which ranks the tokens the same).
A positive value means the token raised the probability of what was written. The source share of a step is the
share of the absolute attribution that goes to the source rather than the prefix (Voita et al. 2021, "Analyzing
the Source and Target Contributions to Predictions in Neural Machine Translation").

Attribution reads the decoder over the whole prefix at once; `cached=True` steps it through the KV cache as decoding
does (the same numbers: tested), for models whose cached path differs.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
from captum.attr import InputXGradient, IntegratedGradients, Occlusion

from transformer import Interventions, Seq2SeqModel
from transformer.decoding import next_token_logits
from transformer.hooks import using
from transformer.interventions import held

IG_STEPS = 50


@dataclass(frozen=True)
class Method:
    title: str
    note: str  # its choices, in one line


METHODS = {
    "input_x_gradient": Method(
        "Input × gradient",
        "Input × gradient: each token's embedding times the gradient of log p(token written), summed over the "
        "embedding's dimensions; a positive value raised the probability.",
    ),
    "integrated_gradients": Method(
        "Integrated gradients",
        f"Integrated gradients: gradients along the path from zero embeddings (positions kept) to the real ones "
        f"({IG_STEPS} steps), times the input, summed over dimensions; the values add up to the change in log p.",
    ),
    "occlusion": Method(
        "Occlusion",
        "Occlusion: one token's embedding set to zero (its position kept); the value is how far log p(token written) "
        "falls.",
    ),
}
AGGREGATES = {
    "sum": "Sum: the values summed over the embedding's dimensions (signed).",
    "l2": "L2: the L2 norm over the embedding's dimensions (unsigned: how much a token matters, not which way; "
    "occlusion's is the size of its fall).",
}
AGGREGATE_TITLES = {"sum": "sum", "l2": "L2"}
WORDS_NOTE = "In words, a word's value is the sum over its pieces."


def titled(method: str, aggregate: str) -> str:
    """A method with its aggregate, as the Why tab titles it: "Input × gradient (L2)"."""
    return f"{METHODS[method].title} ({AGGREGATE_TITLES[aggregate]})"


def source_share(source: np.ndarray, prefix: np.ndarray) -> float:
    """The source's share of the absolute values of a step (the prefix has the rest); NaN when all are 0."""
    src, pre = float(np.abs(source).sum()), float(np.abs(prefix).sum())
    return src / (src + pre) if src + pre > 0 else float("nan")


@dataclass
class StepAttribution:
    step: int  # 1-based, as the page and the API count steps
    token: int  # the token written at that step
    source: np.ndarray  # (S,): one value per source token
    prefix: np.ndarray  # (step,): one value per decoder input at that step (the start token, then the tokens before)
    log_prob: float  # log p(token) that was attributed
    delta: float | None = None  # integrated gradients: sum of values - (log p - log p at the baseline)

    @property
    def source_share(self) -> float:
        return source_share(self.source, self.prefix)


class Scorer:
    """log p(the token written at a step) as a function of the source's and the decoder inputs' embeddings: what
    Captum differentiates. A batch of embeddings (B, ...) gives B log-probabilities."""

    def __init__(
        self,
        model: Seq2SeqModel,
        src_ids: list[int],
        tokens: list[int],
        limit: int | None = None,
        interventions: Interventions | None = None,
        cached: bool = False,
    ) -> None:
        device = next(model.parameters()).device
        self.model, self.tokens, self.interventions, self.cached = model, list(tokens), interventions, cached
        self.limit = limit or model.config.max_new_tokens
        self.src = torch.tensor([src_ids], device=device)
        self.tgt = torch.tensor([[model.config.bos_id, *tokens]], device=device)

    def inputs(self, step: int) -> tuple[torch.Tensor, torch.Tensor]:
        """The embeddings that step `step` (1-based) reads: the source's (1, S, D) and its decoder inputs' (1, step, D)."""
        with torch.no_grad():
            src, tgt = self.model.embed_source(self.src), self.model.embed_target(self.tgt[:, :step])
        return src.requires_grad_(), tgt.requires_grad_()

    def __call__(self, src_embeds: torch.Tensor, tgt_embeds: torch.Tensor, step: int) -> torch.Tensor:
        B, T = src_embeds.size(0), tgt_embeds.size(1)
        src, tgt = self.src.expand(B, -1), self.tgt[:, :T].expand(B, -1)
        # the embeddings are read at the hook points before positions; a cached call covers positions start..
        given = [
            ("encoder.hook_embed", lambda x, at: src_embeds),
            ("decoder.hook_embed", lambda x, at: tgt_embeds[:, at.start : at.start + x.size(1)]),
        ]
        with held(self.interventions), using(given):
            enc = self.model.encode(src)
            if self.cached:  # one position at a time through the cache, as decoding reads it
                cache = None
                for t in range(T):
                    dec = self.model.decode(tgt[:, t : t + 1], enc.memory, enc.src_mask, cache, use_cache=True)
                    cache = dec.cache
            else:
                dec = self.model.decode(tgt, enc.memory, enc.src_mask)
        return self.score(next_token_logits(self.model, dec.hidden[:, -1], step - 1, self.limit), step)

    def score(self, logits: torch.Tensor, step: int) -> torch.Tensor:
        """What is attributed, from the next-token logits (B, V) after the model's rules: log p(token written)."""
        return logits.log_softmax(dim=-1)[:, self.tokens[step - 1]]


def no_gradients(err: RuntimeError) -> str:
    """What to say for a model whose forward pass autograd cannot differentiate (the error autograd raised)."""
    return f"This model cannot give gradients for attribution: {str(err).splitlines()[0]}"


def check_aggregate(aggregate: str) -> None:
    if aggregate not in AGGREGATES:
        raise ValueError(f"unknown aggregate {aggregate!r}: use one of {', '.join(AGGREGATES)}")


def per_dimension(scorer: Scorer, step: int, method: str, ig_steps: int = IG_STEPS) -> tuple[tuple, float | None]:
    """Captum's values per embedding dimension for step `step` (1-based), the source's (1, S, D) and the decoder
    inputs' (1, step, D), by `method` (a key of METHODS); and integrated gradients' convergence delta."""
    if method not in METHODS:
        raise ValueError(f"unknown attribution method {method!r}: use one of {', '.join(METHODS)}")
    src_embeds, tgt_embeds = scorer.inputs(step)
    inputs, delta = (src_embeds, tgt_embeds), None
    with torch.enable_grad():
        if method == "input_x_gradient":
            parts = InputXGradient(scorer).attribute(inputs, additional_forward_args=(step,))
        elif method == "integrated_gradients":
            parts, deltas = IntegratedGradients(scorer).attribute(
                inputs,
                baselines=(torch.zeros_like(src_embeds), torch.zeros_like(tgt_embeds)),
                additional_forward_args=(step,),
                n_steps=ig_steps,
                return_convergence_delta=True,
            )
            delta = float(deltas[0])
        else:
            D = src_embeds.size(-1)
            parts = Occlusion(scorer).attribute(
                inputs,
                sliding_window_shapes=((1, D), (1, D)),
                strides=((1, D), (1, D)),
                baselines=(0.0, 0.0),
                additional_forward_args=(step,),
                perturbations_per_eval=src_embeds.size(1) + tgt_embeds.size(1),
            )
    return tuple(part.detach() for part in parts), delta


def aggregated(parts: tuple, method: str, aggregate: str) -> tuple[np.ndarray, np.ndarray]:
    """One number per token, (source (S,), prefix (T,)), from per_dimension's values, as AGGREGATES says."""
    check_aggregate(aggregate)
    if method == "occlusion":  # the fall itself, which every dimension holds; l2: its size
        reduce = (lambda a: a.mean(dim=-1)) if aggregate == "sum" else (lambda a: a.mean(dim=-1).abs())
    else:
        reduce = (lambda a: a.sum(dim=-1)) if aggregate == "sum" else (lambda a: a.norm(dim=-1))
    source, prefix = (reduce(part)[0].cpu().numpy().astype(np.float64) for part in parts)
    return source, prefix


def attribute_step(
    scorer: Scorer, step: int, method: str, ig_steps: int = IG_STEPS, aggregate: str = "sum"
) -> StepAttribution:
    """Step `step`'s (1-based) written token attributed by `method` (a key of METHODS), aggregated over the
    embedding's dimensions by `aggregate` (a key of AGGREGATES); integrated gradients integrates over `ig_steps`
    points (its completeness gap, `delta`, shrinks as they grow)."""
    check_aggregate(aggregate)
    parts, delta = per_dimension(scorer, step, method, ig_steps)
    with torch.no_grad():
        value = float(scorer(*scorer.inputs(step), step)[0])
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
