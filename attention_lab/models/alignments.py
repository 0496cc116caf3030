"""Gold alignments: which source token a perfectly aligned cross-attention head reads at each step, where it is known.

A model card names one under `gold_alignment`; the head summary then scores every cross head against it.
"""

from __future__ import annotations

ALIGNMENTS = ("reversal",)


def gold_alignment(alignment: str | None, n_source: int) -> list[tuple[int, int]]:
    """(step, source position) pairs, 0-based, that a perfectly aligned cross head looks at; [] when none is known.

    reversal: output i reads source n - i + 1 (1-based, n characters before </s>), for the n characters only. Steps
    the decoding never reached (it stopped early) are in the list too: they count as misses.
    """
    if alignment == "reversal":
        n = n_source - 1
        return [(i, n - 1 - i) for i in range(n)]
    return []
