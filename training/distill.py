"""Sequence-level self-distillation targets: the model's own beam search, the hypothesis nearest the reference."""

from __future__ import annotations

from pathlib import Path

import sacrebleu
import torch.distributed as dist

from transformer import Seq2SeqPipeline, Transformer
from transformer.tokenizer import Tokenizer

from .data import ding_split, read_tsv, write_tsv
from .log import report


def distilled_sentences(
    model: Transformer, tokenizer: Tokenizer, run_dir: Path, is_main: bool, distributed: bool, start: int
) -> list[tuple[str, str]]:
    """The Ding training sentences with targets from the model's own beam search, for the distillation window that
    opens at step `start`. They are made once, by rank 0, and kept in the run dir, so that --resume goes on with the
    same targets; a later window (a resumed run with a later --max-steps) makes its own."""
    path = run_dir / f"distilled-{start}.tsv"
    if is_main and not path.is_file():
        pairs = sorted(ding_split("train"), key=lambda pair: len(pair[0]))  # similar lengths batch faster
        report(f"self-distillation: translating the {len(pairs):,} training sentences with beam 4")
        candidates = Seq2SeqPipeline(model, tokenizer).candidates([de for de, _ in pairs], beam_size=4)
        run_dir.mkdir(parents=True, exist_ok=True)
        write_tsv([(de, nearest(hyps[:4], en)) for (de, en), hyps in zip(pairs, candidates)], path)
    if distributed:
        dist.barrier()
    return read_tsv(path)


def nearest(candidates: list[str], reference: str) -> str:
    """The candidate with the highest sentence BLEU against the reference, the better-ranked one on ties; the reference
    itself when no candidate has any words. Curly and straight apostrophes count as the same."""
    candidates = [c for c in candidates if c.strip()]
    if not candidates:
        return reference
    bleu = sacrebleu.BLEU(effective_order=True)
    straight = reference.replace("’", "'")

    def score(candidate: str) -> float:
        return bleu.sentence_score(candidate.replace("’", "'"), [straight]).score

    return max(candidates, key=score)
