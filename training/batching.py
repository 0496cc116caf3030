"""Text pairs to training tensors: length-bucketed batches of (src, decoder input, labels), and word dropout."""

from __future__ import annotations

import random
from collections.abc import Iterator, Sequence

import torch

from transformer.tokenizer import Tokenizer

Batch = tuple[torch.Tensor, torch.Tensor, torch.Tensor]  # src (B, S), decoder input (B, T), labels (B, T)


def token_batches(lengths: Sequence[int], max_tokens: int, shuffle: bool = True, seed: int = 0) -> Iterator[list[int]]:
    """Indices grouped into batches of similar length holding at most max_tokens (padded) tokens each.

    Sorting by length keeps padding low; with shuffle, examples of equal length and the batch order are shuffled
    (seeded), so every epoch sees different batches.
    """
    rng = random.Random(seed)
    order = list(range(len(lengths)))
    if shuffle:
        rng.shuffle(order)
    order.sort(key=lambda i: lengths[i])  # stable: ties keep their shuffled order
    batches, batch, longest = [], [], 0
    for i in order:
        longest_if_added = max(longest, lengths[i])
        if batch and longest_if_added * (len(batch) + 1) > max_tokens:
            batches.append(batch)
            batch, longest_if_added = [], lengths[i]
        batch.append(i)
        longest = longest_if_added
    if batch:
        batches.append(batch)
    if shuffle:
        rng.shuffle(batches)
    yield from batches


def make_batches(pairs, tokenizer: Tokenizer, max_tokens: int, max_len: int, seed: int) -> Iterator[Batch]:
    """Encoded, length-bucketed (src, decoder input, labels) tensors; pairs longer than max_len are skipped."""
    encoded = [(tokenizer.encode(s), tokenizer.encode_target(t)) for s, t in pairs]
    encoded = [(s, t) for s, t in encoded if len(s) <= max_len and len(t) - 1 <= max_len]
    lengths = [max(len(s), len(t) - 1) for s, t in encoded]
    for indices in token_batches(lengths, max_tokens, shuffle=True, seed=seed):
        yield collate([encoded[i] for i in indices], tokenizer.pad_id)


def collate(examples, pad_id: int) -> Batch:
    """(source ids, bos + target ids + eos) pairs -> right-padded src, decoder input and labels."""
    src_width = max(len(s) for s, _ in examples)
    tgt_width = max(len(t) for _, t in examples)
    src = torch.full((len(examples), src_width), pad_id, dtype=torch.long)
    tgt = torch.full((len(examples), tgt_width), pad_id, dtype=torch.long)
    for i, (s, t) in enumerate(examples):
        src[i, : len(s)] = torch.tensor(s)
        tgt[i, : len(t)] = torch.tensor(t)
    return src, tgt[:, :-1], tgt[:, 1:]


def word_dropout(src: torch.Tensor, p: float, unk_id: int, pad_id: int, eos_id: int) -> torch.Tensor:
    """Replace each real source token (not pad or eos) by <unk> with probability p (Sennrich & Zhang 2019)."""
    if p <= 0:
        return src
    drop = (torch.rand(src.shape) < p) & (src != pad_id) & (src != eos_id)
    return src.masked_fill(drop, unk_id)
