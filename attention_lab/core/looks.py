"""How a reader can look at the weights (the readings, the colour scales, the Focus head's mean), and every name
the page shows for the kinds and the looks. The page applies the looks (assets/units.mjs) to the decoding it holds;
the names are sent to it once (Names, the header's value, and a lesson file's state), never kept in its modules; the
server reads a look back only for an export."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Literal

from pydantic import Field

from .kinds import NAMES, PAGE_ORDER

FOCUS_MEAN = "Mean of all heads"  # the Focus head choice that averages every head
READINGS = {
    "weights": "Attention weights",
    "value": "Value-weighted ‖α·v·W_o‖",
    "rollout": "Rollout",
}
SCALES = {"linear": "linear", "log": "log", "row": "per-row max"}


@dataclass
class Look:
    """How the views look at the weights."""

    words: bool = True  # pieces merged into words
    hide_specials: Annotated[bool, Field(serialization_alias="hideSpecials")] = False
    scale: str = "linear"  # a key of SCALES
    focus: tuple[int, int] | None = None  # (layer, head), 0-based; null: the mean of all heads
    reading: str = "weights"  # a key of READINGS


@dataclass
class KindName:
    title: str  # "Cross-attention"
    axes: tuple[str, str]  # a view's rows (the queries) and columns (the keys)


@dataclass
class Names:
    """Every name the page shows for the kinds and the looks."""

    kinds: dict[str, KindName]
    order: list[str]  # the kinds in the page's order (the keys 1, 2, 3)
    readings: dict[str, str]
    scales: dict[str, str]
    focus_mean: str
    op: Literal["names"] = "names"


def names() -> Names:
    return Names(
        kinds={kind: KindName(NAMES[kind].title, NAMES[kind].axes) for kind in PAGE_ORDER},
        order=list(PAGE_ORDER),
        readings=dict(READINGS),
        scales=dict(SCALES),
        focus_mean=FOCUS_MEAN,
    )
