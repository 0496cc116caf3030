"""What attribution reads and gives back: the Scorer (log p of a written token as a function of the embeddings the
model reads), a method's record, the aggregates of per-dimension values, and a step's attribution.

A token's input is its embedding as the model reads it, before positions are added (Seq2SeqModel.embed_source and
embed_target, put in through the hook points encoder.hook_embed and decoder.hook_embed); a method differentiates,
perturbs or zeroes what the model reads, through its real forward pass. AGGREGATES says how a token's one number is
made of per-dimension values: "sum" (signed, the default: a positive value raised the probability) or "l2" (the L2
norm over the dimensions, unsigned: how much the token matters, not which way). The source share of a step is the
share of the absolute attribution that goes to the source rather than the prefix (Voita et al. 2021, "Analyzing
the Source and Target Contributions to Predictions in Neural Machine Translation").

Attribution reads the decoder over the whole prefix at once; `cached=True` steps it through the KV cache as decoding
does (the same numbers: tested), for models whose cached path differs.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import torch

from transformer import Interventions, Seq2SeqModel, run_with_cache
from transformer.checkpoint import error_line
from transformer.decoding import next_token_logits
from transformer.forced import decoder_input

IG_STEPS = 50
AGGREGATES = {
    "sum": "Sum: the values summed over the embedding's dimensions (signed).",
    "l2": "L2: the L2 norm over the embedding's dimensions (unsigned: how much a token matters, not which way; "
    "a fall's (occlusion, value zeroing) is its size).",
}
AGGREGATE_TITLES = {"sum": "sum", "l2": "L2"}
Parts = tuple  # what a method computes for a step, before it is aggregated (its own shapes)


@dataclass(frozen=True)
class Method:
    """An attribution method: its title and its choices in one line (the page and the API say them), what it
    computes for a step (`parts`: its values and integrated gradients' convergence delta, or None) and how a token's
    one number is made of them (`reduce`, by aggregate). `contrasts`: whether it can attribute a logit difference
    (why.contrast.LogitDifference's score), not only log p."""

    title: str
    note: str
    parts: Callable[..., tuple[Parts, float | None]]  # (scorer, step, ig_steps) ->
    reduce: Callable[[Parts, str], tuple[np.ndarray, np.ndarray]]  # (parts, aggregate) -> source (S,), prefix (T,)
    contrasts: bool = True


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
        self.src_ids = list(src_ids)
        self.limit = limit or model.config.max_new_tokens
        self.src = torch.tensor([src_ids], device=device)

    def inputs(self, step: int) -> tuple[torch.Tensor, torch.Tensor]:
        """The embeddings that step `step` (1-based) reads: the source's (1, S, D) and its decoder inputs' (1, step, D)."""
        with torch.no_grad():
            tgt = decoder_input(self.model, self.tokens[:step], 1, self.src.device)  # bos, tokens[: step - 1]
            src, tgt = self.model.embed_source(self.src), self.model.embed_target(tgt)
        return src.requires_grad_(), tgt.requires_grad_()

    def __call__(self, src_embeds: torch.Tensor, tgt_embeds: torch.Tensor, step: int) -> torch.Tensor:
        B, T = src_embeds.size(0), tgt_embeds.size(1)
        # the embeddings are read at the hook points before positions; a cached call covers positions start..
        given = [
            ("encoder.hook_embed", lambda x, at: src_embeds),
            ("decoder.hook_embed", lambda x, at: tgt_embeds[:, at.start : at.start + x.size(1)]),
        ]
        src, tokens = self.src.expand(B, -1), self.tokens[:T]  # step T reads bos and the T - 1 tokens before it
        run = run_with_cache(self.model, src, tokens, (), self.interventions, given, stepwise=self.cached)
        return self.score(next_token_logits(self.model, run.hidden[:, -1], step - 1, self.limit), step)

    def log_prob(self, step: int) -> float:
        """What is attributed at step `step`, with the embeddings as they are (log p of the token written)."""
        with torch.no_grad():
            return float(self(*self.inputs(step), step)[0])

    def score(self, logits: torch.Tensor, step: int) -> torch.Tensor:
        """What is attributed, from the next-token logits (B, V) after the model's rules: log p(token written)."""
        return logits.log_softmax(dim=-1)[:, self.tokens[step - 1]]


def no_gradients(err: RuntimeError) -> str:
    """What to say for a model whose forward pass autograd cannot differentiate (the error autograd raised)."""
    return f"This model cannot give gradients for attribution: {error_line(err)}"


def check_aggregate(aggregate: str) -> None:
    if aggregate not in AGGREGATES:
        raise ValueError(f"unknown aggregate {aggregate!r}: use one of {', '.join(AGGREGATES)}")
