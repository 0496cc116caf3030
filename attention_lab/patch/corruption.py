"""The corrupted source a user asks for, as patching needs it: ids of the same length as the clean source's, and the
token positions to corrupt with noise; the source's words (the units a click or /patch's `noise` names); and a
word swapped for another that the model reads as a close one."""

from __future__ import annotations

from dataclasses import dataclass

import torch

from transformer import Seq2SeqPipeline
from transformer.tokenizer import WORD_BOUNDARY

from ..checks import InputError, check_source, is_blank
from ..core.units import source_words

SWAPS_TRIED = 64  # candidate words tried, nearest first, for one that keeps the source's number of tokens
# What a corruption that cannot be patched is told (the page makes the same from them: patch/in_page.mjs)
NOTHING_CORRUPTED = (
    "Type a corrupted source, or choose source words to corrupt with noise: there is nothing to compare the clean "
    "source with."
)
OTHER_LENGTH = (
    "The corrupted source is {corrupted} tokens and the clean one {clean}: patching compares them position by "
    "position, so they need the same number of tokens."
)
NO_SUCH_WORD = "Noise words must be whole numbers from 1 to {words}, the source's words (got {got})."


@dataclass(frozen=True)
class Corruption:
    clean: list[int]  # the clean source's ids
    corrupted: list[int]  # the corrupted source's ids (the clean ones where only noise corrupts)
    noise: list[int]  # 0-based token positions whose embeddings get noise


def corruption(pipeline: Seq2SeqPipeline, clean: str, corrupted: str | None, noise: list[int]) -> Corruption:
    """The corruption of `clean` by the text `corrupted` (None or blank: the clean one) and noise on the 0-based
    words `noise`; InputError with a clear message when it cannot be patched."""
    clean_ids, _ = check_source(pipeline, clean)
    plain = corrupted is None or is_blank(corrupted)
    if plain and not noise:
        raise InputError(NOTHING_CORRUPTED)
    corrupted_ids = clean_ids if plain else check_source(pipeline, corrupted)[0]
    if len(corrupted_ids) != len(clean_ids):
        raise InputError(OTHER_LENGTH.format(corrupted=len(corrupted_ids), clean=len(clean_ids)))
    groups = source_words(pipeline, clean_ids)
    wrong = [w for w in noise if not 0 <= w < len(groups)]
    if wrong:
        raise InputError(NO_SUCH_WORD.format(words=len(groups), got=wrong[0] + 1))
    positions = sorted({p for w in noise for p in groups[w]})
    return Corruption(clean_ids, corrupted_ids, positions)


@torch.no_grad()
def swapped(pipeline: Seq2SeqPipeline, ids: list[int], word: int, nth: int = 0, like: int | None = None) -> str | None:
    """The text of `ids` with its `word` (0-based) swapped for the nth nearest other piece to `like` (by default the
    word's own first piece), by cosine similarity of the model's source embeddings, that keeps the text's number of
    tokens (a word of several pieces swaps its first); None when no such piece is found."""
    tokenizer, model = pipeline.tokenizer, pipeline.model
    groups = source_words(pipeline, ids)
    if not 0 <= word < len(groups):
        raise InputError(f"There is no word {word + 1}: the source has {len(groups)}.")
    at = groups[word][0]
    like = ids[at] if like is None else like
    piece = tokenizer.id_to_token(like)
    vocab = torch.arange(model.config.src_vocab_size, device=next(model.parameters()).device)
    table = torch.nn.functional.normalize(model.embed_source(vocab[None])[0].float(), dim=-1)
    order = (table @ table[like]).argsort(descending=True).tolist()
    found = -1
    for candidate in order[: SWAPS_TRIED * (nth + 1)]:
        other = tokenizer.id_to_token(candidate)
        if candidate == like or candidate in model.special_ids or not _alike(piece, other):
            continue
        text = tokenizer.decode([*ids[:at], candidate, *ids[at + 1 :]])
        if len(tokenizer.encode(text)) == len(ids):
            found += 1
            if found == nth:
                return text
    return None


def _alike(piece: str, other: str) -> bool:
    """Whether `other` can stand where `piece` does: both start a word or neither does, and both are letters (or
    both digits) once the word mark is taken off."""
    bare, other_bare = piece.lstrip(WORD_BOUNDARY), other.lstrip(WORD_BOUNDARY)
    if not other_bare or piece.startswith(WORD_BOUNDARY) != other.startswith(WORD_BOUNDARY):
        return False
    return (bare.isalpha() and other_bare.isalpha()) or (bare.isdigit() and other_bare.isdigit())
