"""The words two outputs have in common, and how differently the two models attended at each.

The common words are difflib's matching blocks over the two lists of words (exact matches, in order: the longest
common run first, then the same on either side of it). The distance between two rows is the Jensen–Shannon distance
in base 2: the square root of the Jensen–Shannon divergence, a metric in [0, 1], 0 for identical rows and 1 for rows
with no source word in common.
"""

from __future__ import annotations

from difflib import SequenceMatcher

import numpy as np
from scipy.spatial.distance import jensenshannon


def shared_words(words_a: list[str], words_b: list[str]) -> list[tuple[int, int]]:
    """(index in A, index in B) of each word the two outputs have in common, in order.

    >>> shared_words(["the", "house", "is", "old"], ["the", "old", "house", "is", "old"])
    [(0, 0), (1, 2), (2, 3), (3, 4)]
    """
    blocks = SequenceMatcher(None, words_a, words_b, autojunk=False).get_matching_blocks()
    return [(a + k, b + k) for a, b, size in blocks for k in range(size)]


def distance(row_a: np.ndarray, row_b: np.ndarray) -> float:
    """The Jensen–Shannon distance (base 2) between two rows over the same source words: 0 for identical rows, 1
    for rows with no source word in common."""
    if not row_a.sum() or not row_b.sum():  # a row with no weight outside the special tokens: nothing to compare
        return float(row_a.sum() != row_b.sum())
    with np.errstate(invalid="ignore"):
        found = float(jensenshannon(row_a, row_b, base=2))
    # Rounding leaves two nearly equal rows a divergence a hair below 0, whose square root scipy answers as NaN
    return 0.0 if np.isnan(found) else found
