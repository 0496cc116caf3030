"""Patching as JSON: the /patch answer, and the Patch tab's message, from one sweep (transformer.patching)."""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch

from transformer import KINDS, Seq2SeqPipeline
from transformer.patching import Pair, Patching

from .corruption import Corruption


def _r(value: float) -> float | None:
    return None if math.isnan(value) else round(value, 4)


def _rows(values: torch.Tensor) -> list:
    """A tensor of r as nested lists, null where there is nothing to restore."""
    if values.dim() == 1:
        return [_r(float(v)) for v in values]
    return [_rows(v) for v in values]


def sweep(pipeline: Seq2SeqPipeline, corruption: Corruption, tokens: list[int], limit: int) -> tuple[Pair, Patching]:
    """The pair read at the clean output `tokens` (its end token included), and its whole sweep."""
    pair = Pair(pipeline.model, corruption.clean, tokens, corruption.corrupted, corruption.noise,
                max_new_tokens=limit)  # fmt: skip
    return pair, pair.sweep()


Grid = list[list[float | None]]


@dataclass
class PatchedStep:
    step: int
    token: str  # as labelled
    clean_logp: float
    corrupted_logp: float
    encoder_states: Grid  # [layer][source position]
    decoder_states: Grid  # [layer][target position up to the step]
    heads: dict[str, Grid]  # kind -> [layer][head]


@dataclass
class Patched:
    """The /patch answer."""

    source_tokens: list[str]
    corrupted_tokens: list[str]
    output_tokens: list[str]
    corrupted_output_text: str
    steps: list[PatchedStep]


def steps_record(patching: Patching, labels: list[str]) -> list[PatchedStep]:
    """Per step: the token written (as labelled), both log ps, and r per encoder layer and source position, per
    decoder layer and target position up to the step, and per kind, layer and head."""
    return [
        PatchedStep(
            step=t + 1,
            token=label,
            clean_logp=round(float(patching.clean_logp[t]), 5),
            corrupted_logp=round(float(patching.corrupted_logp[t]), 5),
            encoder_states=_rows(patching.encoder_states[:, :, t]),
            decoder_states=_rows(patching.decoder_states[:, : t + 1, t]),
            heads={kind: _rows(patching.heads[kind][:, :, t]) for kind in KINDS},
        )
        for t, label in enumerate(labels)
    ]


def patch_record(pipeline: Seq2SeqPipeline, corruption: Corruption, tokens: list[int], limit: int) -> Patched:
    """The /patch answer."""
    tokenizer = pipeline.tokenizer
    pair, patching = sweep(pipeline, corruption, tokens, limit)
    return Patched(
        source_tokens=tokenizer.tokens(corruption.clean),
        corrupted_tokens=tokenizer.tokens(corruption.corrupted),
        output_tokens=tokenizer.tokens(tokens),
        corrupted_output_text=tokenizer.decode(pair.corrupted_output()),
        steps=steps_record(patching, tokenizer.tokens(tokens)),
    )
