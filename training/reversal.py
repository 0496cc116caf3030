"""The synthetic reversal task: random strings of lowercase letters and digits, each paired with its reverse."""

from __future__ import annotations

import random
import string

REVERSAL_ALPHABET = string.ascii_lowercase + string.digits


REVERSAL_MAX_CHARS = 24  # the longest training string


def reversal_pairs(n: int, min_len: int = 1, max_len: int = REVERSAL_MAX_CHARS, seed: int = 0) -> list[tuple[str, str]]:
    """n seeded random strings of lowercase letters and digits, each paired with its reverse."""
    rng = random.Random(seed)
    pairs = []
    for _ in range(n):
        text = "".join(rng.choices(REVERSAL_ALPHABET, k=rng.randint(min_len, max_len)))
        pairs.append((text, text[::-1]))
    return pairs
