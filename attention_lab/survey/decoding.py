"""A corpus decoded greedily in batches under many sets of ablated heads at once: batch row b of a pass ablates its
own set (transformer.Interventions.rows), so each head's survey costs one decoding of the corpus, run together."""

from __future__ import annotations

import torch

from transformer import Head, Interventions, Seq2SeqPipeline, greedy_decode
from transformer.hub import default_limit

BATCH = 64  # sentences per batch, as Seq2SeqPipeline.generate takes them: the same batches give the same limits
ROWS = 1024  # the most rows (a sentence under a set of ablated heads) decoded in one pass


def batches(sources: list[str]) -> list[list[str]]:
    """The corpus in batches of BATCH, in order. Each batch's length limit (default_limit) depends only on it, so
    any split of whole batches across processes decodes exactly what one process does."""
    return [sources[i : i + BATCH] for i in range(0, len(sources), BATCH)]


@torch.no_grad()
def decode_sets(pipeline: Seq2SeqPipeline, src: torch.Tensor, sets: list[frozenset[Head]]) -> list[list[list[int]]]:
    """src (B, S) decoded greedily once per set of ablated heads, as training.evaluate decodes a batch: per set, B
    token lists (no bos or eos)."""
    B, limit = src.size(0), default_limit(src)
    per_pass = max(1, ROWS // B)
    out = []
    for start in range(0, len(sets), per_pass):
        chunk = sets[start : start + per_pass]
        rows = tuple(heads for heads in chunk for _ in range(B))
        tokens = greedy_decode(pipeline.model, src.repeat(len(chunk), 1), limit, Interventions(rows=rows))
        out += [tokens[i * B : (i + 1) * B] for i in range(len(chunk))]
    return out


def decoded_steps(tokens: list[int], limit: int, eos_id: int) -> list[int]:
    """The steps a decoding took: its tokens, and eos when it wrote one (it stopped before the limit)."""
    return tokens + [eos_id] if len(tokens) < limit else tokens
