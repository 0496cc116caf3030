"""The units a view is drawn in, defined in numpy: the reference that the page's merging of words and hiding of
specials (attention_lab/assets/units.mjs) is checked against (tests/test_units.py, test_page_modules.py,
test_why_tab.py). The rules are attention_lab.core.units's: a word's columns summed, its rows averaged,
specials dropped with each row renormalised."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from attention_lab.core.units import piece_label, word_groups, word_label


@dataclass(frozen=True)
class Units:
    """How one axis is drawn: a label per unit, and the pieces (indices) each unit stands for."""

    labels: list[str]
    groups: list[list[int]]
    special: list[bool]  # per unit: a special token such as </s> or <s>

    @classmethod
    def of(
        cls, pieces: Sequence[str], special: Sequence[bool], words: bool = True, character_level: bool = False
    ) -> Units:
        """`pieces` (special[i]: piece i is a special token) as words (merged) or as pieces; a character-level
        model's units are its characters either way."""
        groups = word_groups(pieces, special, character_level)
        if words:
            labels = [pieces[g[0]] if special[g[0]] else word_label([pieces[i] for i in g]) for g in groups]
            return cls(labels, groups, [special[g[0]] for g in groups])
        starts = {g[0] for g in groups}
        labels = [piece_label(p, i in starts, special[i]) for i, p in enumerate(pieces)]
        return cls(labels, [[i] for i in range(len(pieces))], list(special))

    def __len__(self) -> int:
        return len(self.labels)

    def without_specials(self) -> tuple[Units, list[int]]:
        """These units minus the special tokens, and the indices of the units kept."""
        keep = [i for i, s in enumerate(self.special) if not s]
        return Units([self.labels[i] for i in keep], [self.groups[i] for i in keep], [False] * len(keep)), keep

    def key_matrix(self, n_pieces: int) -> np.ndarray:
        """(pieces, units): sums the columns of each unit's pieces."""
        matrix = np.zeros((n_pieces, len(self.groups)), dtype=np.float32)
        for unit, group in enumerate(self.groups):
            matrix[group, unit] = 1.0
        return matrix

    def query_matrix(self, n_pieces: int) -> np.ndarray:
        """(units, pieces): averages the rows of each unit's pieces."""
        matrix = np.zeros((len(self.groups), n_pieces), dtype=np.float32)
        for unit, group in enumerate(self.groups):
            matrix[unit, group] = 1.0 / len(group)
        return matrix


def in_units(weights: np.ndarray, queries: Units, keys: Units, hide_specials: bool = False) -> np.ndarray:
    """Piece-level weights (..., Q, K) as unit-level weights, specials dropped and rows renormalised if asked.

    Specials are single-piece units, so dropping them after merging equals dropping them before.
    """
    weights = np.asarray(weights, dtype=np.float32)
    merged = queries.query_matrix(weights.shape[-2]) @ weights @ keys.key_matrix(weights.shape[-1])
    if not hide_specials:
        return merged
    _, rows = queries.without_specials()
    _, cols = keys.without_specials()
    kept = merged[..., rows, :][..., :, cols]
    total = kept.sum(axis=-1, keepdims=True)
    return np.divide(kept, total, out=np.zeros_like(kept), where=total > 0)
