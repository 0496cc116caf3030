"""A scored translation: its steps, its sentence scores (mean log p, source share, coverage; Wass-to-Unif and
Wass-to-Data per decoder layer, and Wass-Combo) and its flags."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

from .reference import Reference
from .wasserstein import combo, to_unif

# A word read, over the whole output, for at least a third of one step's cross-attention: a translated word takes
# about a step's worth. On the de-en model's correct examples the least-read word gets 0.39 of a step (a "der" that
# "the" shares with the next word); "klein", left out of "The house is old.", gets 0.30.
COVERED = 0.35


@dataclass(frozen=True)
class Flag:
    kind: str  # a key of attention_lab.trust.flags.KINDS
    at: int  # 1-based: the step, or for "uncovered" the source word
    message: str


@dataclass
class StepScore:
    step: int  # 1-based
    token: int  # the token forced at this step
    logp: float  # log p(token) under the model's rules (-inf: the rules forbid it here)
    source_share: float  # the source's share of the step's values (nan where there are none)
    source: np.ndarray  # (S,): a value per source token (nan where there are none)
    prefix: np.ndarray  # (step,): a value per decoder input (the start token, then the tokens before)


@dataclass
class Score:
    src_ids: list[int]
    tokens: list[int]  # forced, the end token last
    method: str
    steps: list[StepScore]
    cross: np.ndarray  # (T, S): cross-attention per step, mean over layers and heads
    words: list[list[int]]  # the source's words: token positions of each (special tokens left out)
    reads: np.ndarray  # (W,): each word's cross-attention, summed over its pieces and over the steps
    mass: np.ndarray  # (L, S): per decoder layer, the source attention mass (mean over heads, then over steps)
    reference: Reference | None = None  # correct translations of this model to compare with, if it has any
    flags: list[Flag] = field(default_factory=list)

    @property
    def mean_logp(self) -> float:
        """Mean log p over the forced tokens (-inf if one is forbidden)."""
        return float(np.mean([s.logp for s in self.steps]))

    @property
    def source_share(self) -> float:
        """The mean over steps of the source share (steps without values left out; nan if none has)."""
        shares = [s.source_share for s in self.steps if not math.isnan(s.source_share)]
        return float(np.mean(shares)) if shares else float("nan")

    @property
    def uncovered(self) -> list[int]:
        """The words (0-based) that cross-attention read for less than COVERED of a step's worth."""
        return [w for w, read in enumerate(self.reads) if read < COVERED]

    @property
    def coverage(self) -> float:
        """The share of the source's words read for at least COVERED of a step (1 for a source with no words)."""
        return 1 - len(self.uncovered) / len(self.words) if self.words else 1.0

    @cached_property
    def wass_to_unif(self) -> list[float]:
        """Per decoder layer, the source attention mass's distance to uniform (attention_lab.trust.wasserstein)."""
        return [to_unif(m) for m in self.mass]

    @cached_property
    def wass_to_data(self) -> list[float]:
        """Per decoder layer, the source attention mass's distance to the correct translations' (NaN without any)."""
        if self.reference is None:
            return [math.nan] * len(self.mass)
        return self.reference.to_data(self.mass, len(self.tokens))

    @cached_property
    def wass_combo(self) -> float:
        """Wass-Combo of one layer, the last: the paper combines one layer's (NaN without correct translations)."""
        if self.reference is None:
            return math.nan
        return combo(self.wass_to_unif[-1], self.wass_to_data[-1], self.reference.rules[-1])
