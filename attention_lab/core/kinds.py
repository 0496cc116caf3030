"""The three kinds of attention (transformer.KINDS, defined once in the library) as the page names them."""

from __future__ import annotations

from dataclasses import dataclass

from transformer import KINDS


@dataclass(frozen=True)
class KindNames:
    title: str  # a tab, a section of the export: "Cross-attention"
    name: str  # in running text: "all cross-attention heads", "Cross · Layer 2 · Head 3"
    short: str  # the head summary's column labels
    axes: tuple[str, str]  # a view's rows (the queries) and columns (the keys)


NAMES = {
    "encoder": KindNames("Encoder self-attention", "encoder self", "enc self", ("source (from)", "source (to)")),
    "decoder_self": KindNames(
        "Decoder self-attention", "decoder self", "dec self", ("output (the step that wrote it)", "decoder input")
    ),
    "cross": KindNames("Cross-attention", "cross", "cross", ("output (the step that wrote it)", "source")),
}
assert tuple(NAMES) == KINDS  # every kind named, in the library's order
PAGE_ORDER = ("cross", "encoder", "decoder_self")  # the page shows cross-attention first: it links output to source
