"""The units a view is drawn in: words (subword pieces merged) or the pieces themselves, with or without specials.
The server sends which pieces form a word and how each is labelled (attention_lab.core.payload); the page
merges the weights (assets/units.mjs), and tests/units_reference.py defines the merge in numpy to check it against.

A view's weights arrive per piece, (..., Q, K): rows are the queries (who attends), columns the keys (what is
attended to). Merging pieces into words sums the columns of a word's pieces (the attention *to* a word is the sum
over its pieces) and averages its rows (the attention *from* a word is the mean over its pieces), so every row still
sums to 1. Hiding the special tokens drops their rows and columns and renormalises each row to sum to 1 again.

Labels never show the raw word-boundary mark "▁": a word-initial piece is shown without it, a piece that continues
a word gets "##" in front (as BERT writes it), and a lone "▁" is shown as "␣".

Which tokens are special (hidden on request, never merged into a word) is decided by id, by the model's
special_ids, and arrives here as one flag per piece.
"""

from __future__ import annotations

import functools
import unicodedata
from collections.abc import Sequence

from transformer import Seq2SeqPipeline
from transformer.tokenizer import WORD_BOUNDARY

SPACE = "␣"


def is_punctuation(piece: str) -> bool:
    """A piece made only of punctuation or symbols: the tokenizer splits these off as words of their own."""
    return bool(piece) and all(unicodedata.category(c)[0] in "PS" for c in piece)


def starts_word(piece: str, previous: str = "", character_level: bool = False) -> bool:
    """Whether `piece` begins a word, as the tokenizer's pre-tokenizer splits them: at a piece that begins with "▁",
    and on either side of punctuation; every character of a character-level model. (A special token is a word of
    its own: see word_groups.)"""
    return character_level or piece.startswith(WORD_BOUNDARY) or is_punctuation(piece) or is_punctuation(previous)


def word_groups(pieces: Sequence[str], special: Sequence[bool], character_level: bool = False) -> list[list[int]]:
    """The indices of `pieces` grouped into words (see starts_word); a special piece is a word of its own.

    >>> word_groups(["▁Wir", "▁tre", "ffen", "▁uns", ".", "</s>"], [False] * 5 + [True])
    [[0], [1, 2], [3], [4], [5]]
    """
    groups: list[list[int]] = []
    for i, piece in enumerate(pieces):
        alone = special[i] or (i > 0 and special[i - 1])
        if not groups or alone or starts_word(piece, pieces[i - 1], character_level):
            groups.append([i])
        else:
            groups[-1].append(i)
    return groups


def piece_label(piece: str, starts_word: bool, special: bool = False) -> str:
    """A piece as the pieces view shows it: no "▁"; "##" before a piece that continues a word; a special token as
    it is."""
    if special:
        return piece
    text = piece.replace(WORD_BOUNDARY, " ").strip() if piece.strip(WORD_BOUNDARY) else ""
    if not text:
        return SPACE
    return text if starts_word else "##" + text


def word_label(pieces: Sequence[str]) -> str:
    """The pieces of one word joined, without "▁"."""
    if len(pieces) == 1:
        return piece_label(pieces[0], True)
    return "".join(pieces).replace(WORD_BOUNDARY, " ").strip() or SPACE


def token_label(tokenizer, token_id: int, special_ids: frozenset[int] = frozenset()) -> str:
    """A target token as a label: no "▁"; "##" when it continues a word; a special token as it is."""
    piece = tokenizer.id_to_token(token_id)
    return piece_label(piece, starts_word(piece, character_level=tokenizer.is_character_level), token_id in special_ids)


def token_id(tokenizer, spelled: str, vocab_size: int) -> int | None:
    """The id of the token spelled `spelled` as the candidates spell it (tokenizer.id_to_token), or None."""
    found = tokenizer.token_to_id(spelled)
    if found is not None and 0 <= found < vocab_size and tokenizer.id_to_token(found) == spelled:
        return found
    # a transformers tokenizer shows some pieces otherwise than it stores them ("Ġ" as "▁", bytes as text)
    return spellings(tokenizer, vocab_size).get(spelled)


@functools.lru_cache(maxsize=8)
def spellings(tokenizer, vocab_size: int) -> dict[str, int]:
    """Every token as the candidates spell it -> its (first) id: read once per tokenizer, not once per request."""
    spelled: dict[str, int] = {}
    for i in range(vocab_size):
        spelled.setdefault(tokenizer.id_to_token(i), i)
    return spelled


def source_words(pipeline: Seq2SeqPipeline, ids: list[int]) -> list[list[int]]:
    """The token positions of each word of a source (or an output), its special tokens left out (a character-level
    model's words are its characters)."""
    tokenizer, special_ids = pipeline.tokenizer, pipeline.model.special_ids
    special = [i in special_ids for i in ids]
    groups = word_groups(tokenizer.tokens(ids), special, tokenizer.is_character_level)
    return [group for group in groups if not special[group[0]]]
