"""What the Heads tab keeps of a run."""

from __future__ import annotations

from dataclasses import dataclass

from transformer import DecodingSession, Head


@dataclass
class HeadsState:
    ablated: frozenset[Head] | None = None  # after an Ablate: the heads it removed (the tab shows what that changed)
    # The decoding without interventions, while an ablation or an edit is held: the head summary describes it, and
    # it stays put while heads are tested
    plain: DecodingSession | None = None
