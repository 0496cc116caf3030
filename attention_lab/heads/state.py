"""What the Heads tab keeps of a run."""

from __future__ import annotations

from dataclasses import dataclass

from transformer import Head


@dataclass
class HeadsState:
    ablated: frozenset[Head] | None = None  # after an Ablate: the heads it removed (the tab shows what that changed)
