"""Guerreiro et al. 2023's attention-based hallucination detectors (ACL, "Optimal Transport for Unsupervised
Hallucination Detection in Neural Machine Translation"): how far a translation's source attention mass lies from the
uniform distribution (Wass-to-Unif) and from those of correct translations (Wass-to-Data), and the two combined
(Wass-Combo). A hallucination is detached from its source, and its cross-attention shows it: the mass piles up on a
few tokens (often the end token) or spreads where correct translations never put it. Pure functions over numpy
arrays; attention_lab.trust.reference holds the correct translations.

The source attention mass (the paper's π): at each decoding step, one decoder layer's cross-attention, mean over its
heads, is a distribution over the n source tokens; its mean over the steps (the end token's included) is the
translation's, shape (n,). /score gives each decoder layer's.

- Wass-to-Unif: the Wasserstein distance to the uniform distribution over the same n tokens under the paper's 0/1
  ground cost (moving mass from a token to another costs 1, however far apart they are). Where every move costs the
  same, the cheapest plan leaves min(p_i, 1/n) in place and moves the rest, so the distance is the total variation
  ½ Σ |p_i − 1/n| (as the paper's code computes it): 0 for attention spread evenly, 1 − 1/n for all of it on one token.
- Wass-to-Data: the distance to the source attention masses of correct translations, under the ground cost |x − y|
  between positions. Sources differ in length, so each token sits at its relative position: token i (0-based) of n at
  (i + ½)/n, the centre of its n-th of [0, 1]. (The paper's code pads the shorter distribution with zeros and keeps
  absolute positions, under which the end token of a 5-token source and the 5th token of a 20-token one are one
  place.) On a line the distance is scipy.stats.wasserstein_distance's. The score is the mean of the K smallest
  distances (the paper's bottom-k, k = 4) to the references that attention_lab.trust.reference picks.
- Wass-Combo: Wass-to-Data, unless Wass-to-Unif reaches a threshold τ, the QUANTILE (99.9th percentile) of Wass-to-Unif
  over the correct translations; then Wass-to-Unif, mapped linearly from the correct translations' range of
  Wass-to-Unif onto their range of Wass-to-Data (as the paper's code does), so that attention collapsed beyond
  anything correct ranks with the translations farthest from the data. Each correct translation's Wass-to-Data for
  that range is measured against the others (it is left out of its own comparison).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

K = 4  # the paper's bottom-k: Wass-to-Data is the mean of the k smallest distances
QUANTILE = 0.999  # the paper's threshold on Wass-to-Unif for Wass-Combo, over the correct translations


def source_mass(cross: np.ndarray) -> np.ndarray:
    """(T, L, S) cross-attention per step and decoder layer, mean over heads -> (L, S): each layer's source attention
    mass, the mean over the steps."""
    return np.asarray(cross, dtype=np.float64).mean(axis=0)


def relative_positions(n: int) -> np.ndarray:
    """(n,): where the tokens of an n-token source sit on [0, 1], token i at (i + ½)/n."""
    return (np.arange(n) + 0.5) / n


def to_unif(mass: np.ndarray) -> float:
    """Wass-to-Unif of a source attention mass (n,): its Wasserstein distance to the uniform distribution over the n
    tokens under the 0/1 cost, the total variation ½ Σ |p_i − 1/n|."""
    mass = np.asarray(mass, dtype=np.float64)
    return 0.5 * float(np.abs(mass - 1 / mass.size).sum())


def distance(a: np.ndarray, b: np.ndarray) -> float:
    """The Wasserstein distance between two source attention masses, (n,) and (m,), each token at its relative
    position, under the cost |x − y|."""
    from scipy.stats import wasserstein_distance  # imported when first scored: scipy.stats takes over a second

    return float(wasserstein_distance(relative_positions(len(a)), relative_positions(len(b)), a, b))


def to_data(mass: np.ndarray, references: Sequence[np.ndarray], k: int = K) -> float:
    """Wass-to-Data of a source attention mass (n,): the mean of its k smallest distances to `references` (correct
    translations' masses, any lengths); all of them when there are fewer. ValueError for no references."""
    if not len(references):
        raise ValueError("Wass-to-Data needs at least one reference (got none)")
    nearest = sorted(distance(mass, r) for r in references)[:k]
    return float(np.mean(nearest))


@dataclass(frozen=True)
class ComboRule:
    """How Wass-Combo reads one layer, fitted on correct translations."""

    threshold: float  # τ: Wass-to-Unif from here on is read instead of Wass-to-Data
    unif: tuple[float, float]  # the correct translations' (least, greatest) Wass-to-Unif
    data: tuple[float, float]  # and Wass-to-Data (each measured against the others)

    @classmethod
    def fit(cls, unif: np.ndarray, data: np.ndarray, quantile: float = QUANTILE) -> ComboRule:
        """The rule of correct translations' Wass-to-Unif and Wass-to-Data (one value each per translation)."""
        unif, data = np.asarray(unif, dtype=np.float64), np.asarray(data, dtype=np.float64)
        return cls(float(np.quantile(unif, quantile)), (float(unif.min()), float(unif.max())),
                   (float(data.min()), float(data.max())))  # fmt: skip


def combo(unif: float, data: float, rule: ComboRule) -> float:
    """Wass-Combo: `data` (Wass-to-Data) below the rule's threshold on `unif` (Wass-to-Unif); from there on `unif`,
    mapped linearly from the rule's range of Wass-to-Unif onto its range of Wass-to-Data."""
    if unif < rule.threshold:
        return float(data)
    (u_low, u_high), (d_low, d_high) = rule.unif, rule.data
    if u_high <= u_low:  # every correct translation had the same Wass-to-Unif: nothing to map from
        return d_high
    return float(d_low + (unif - u_low) * (d_high - d_low) / (u_high - u_low))
