"""The pruning curve: heads removed in order of their ablation score, least needed first.

The order is the survey's own measurement, not Michel et al.'s gradient proxy: a head's importance is the corpus
score with that head alone ablated, and the head whose removal leaves the highest score goes first (ties in model
order). The curve prunes the first round(f · n) heads for f = 0, 0.1, ..., 1, over all n heads and, for each kind
alone, over that kind's heads in the same order.
"""

from __future__ import annotations

from transformer import Head
from transformer.config import KINDS

FRACTIONS = tuple(i / 10 for i in range(11))


def pruning_order(importance: dict[Head, float]) -> list[Head]:
    """Heads from the least needed (the highest score without it) to the most; ties in model order."""
    return sorted(importance, key=lambda head: (-importance[head], KINDS.index(head.kind), head.layer, head.head))


def curve(order: list[Head]) -> list[tuple[float, frozenset[Head]]]:
    """(fraction, the heads pruned at it) for each of FRACTIONS: the first round(fraction · n) of `order`."""
    return [(f, frozenset(order[: round(f * len(order))])) for f in FRACTIONS]


def curves(order: list[Head]) -> dict[str, list[tuple[float, frozenset[Head]]]]:
    """The overall curve ("all") and one per kind, each kind's heads kept in the overall order."""
    out = {"all": curve(order)}
    for kind in KINDS:
        out[kind] = curve([h for h in order if h.kind == kind])
    return out
