"""How a survey scores a corpus's decodings: sacreBLEU's corpus BLEU against references, exact match for reversal,
and, where the file gives no references, exact match with the model's own plain decoding (how often it is kept)."""

from __future__ import annotations

from dataclasses import dataclass

import sacrebleu

from .corpus import Corpus

BLEU = "BLEU"
EXACT = "exact match"
KEPT = "exact match with the plain decoding"


@dataclass(frozen=True)
class Metric:
    name: str  # BLEU, EXACT or KEPT
    references: list[str] | None  # None for KEPT: the plain decoding is the reference

    def score(self, hypotheses: list[str], plain: list[str]) -> float:
        """The corpus score of `hypotheses` (0-100); `plain` is the plain decoding (KEPT's reference)."""
        references = self.references if self.references is not None else plain
        if self.name == BLEU:
            return float(sacrebleu.BLEU().corpus_score(hypotheses, [references]).score)
        return 100.0 * sum(h == r for h, r in zip(hypotheses, references)) / len(references)


def metric_for(corpus: Corpus, character_level: bool, reversal: bool) -> Metric:
    """Exact match for a character-level model (reversal), as training.evaluate scores one, against the file's
    references (the reverse of each source for the reversal model when it gives none); BLEU where there are
    references; else exact match with the plain decoding."""
    if character_level and (corpus.references is not None or reversal):
        return Metric(EXACT, corpus.references or [s[::-1] for s in corpus.sources])
    if corpus.references is not None:
        return Metric(BLEU, corpus.references)
    return Metric(KEPT, None)
