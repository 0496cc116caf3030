"""The units a view is drawn in: words (subword pieces merged) or the pieces themselves, with or without specials.

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

import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

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


@dataclass(frozen=True)
class Units:
    """How one axis is drawn: a label per unit, and the pieces (indices) each unit stands for."""

    labels: list[str]
    groups: list[list[int]]
    special: list[bool]  # per unit: a special token such as </s> or <s>

    @classmethod
    def of(
        cls, pieces: Sequence[str], special: Sequence[bool], words: bool = True, character_level: bool = False
    ) -> Units:
        """`pieces` (special[i]: piece i is a special token) as words (merged) or as pieces; a character-level
        model's units are its characters either way."""
        groups = word_groups(pieces, special, character_level)
        if words:
            labels = [pieces[g[0]] if special[g[0]] else word_label([pieces[i] for i in g]) for g in groups]
            return cls(labels, groups, [special[g[0]] for g in groups])
        starts = {g[0] for g in groups}
        labels = [piece_label(p, i in starts, special[i]) for i, p in enumerate(pieces)]
        return cls(labels, [[i] for i in range(len(pieces))], list(special))

    def __len__(self) -> int:
        return len(self.labels)

    def without_specials(self) -> tuple[Units, list[int]]:
        """These units minus the special tokens, and the indices of the units kept."""
        keep = [i for i, s in enumerate(self.special) if not s]
        return Units([self.labels[i] for i in keep], [self.groups[i] for i in keep], [False] * len(keep)), keep

    def key_matrix(self, n_pieces: int) -> np.ndarray:
        """(pieces, units): sums the columns of each unit's pieces."""
        matrix = np.zeros((n_pieces, len(self.groups)), dtype=np.float32)
        for unit, group in enumerate(self.groups):
            matrix[group, unit] = 1.0
        return matrix

    def query_matrix(self, n_pieces: int) -> np.ndarray:
        """(units, pieces): averages the rows of each unit's pieces."""
        matrix = np.zeros((len(self.groups), n_pieces), dtype=np.float32)
        for unit, group in enumerate(self.groups):
            matrix[unit, group] = 1.0 / len(group)
        return matrix


def in_units(weights: np.ndarray, queries: Units, keys: Units, hide_specials: bool = False) -> np.ndarray:
    """Piece-level weights (..., Q, K) as unit-level weights, specials dropped and rows renormalised if asked.

    Specials are single-piece units, so dropping them after merging equals dropping them before.
    """
    weights = np.asarray(weights, dtype=np.float32)
    merged = queries.query_matrix(weights.shape[-2]) @ weights @ keys.key_matrix(weights.shape[-1])
    if not hide_specials:
        return merged
    _, rows = queries.without_specials()
    _, cols = keys.without_specials()
    kept = merged[..., rows, :][..., :, cols]
    total = kept.sum(axis=-1, keepdims=True)
    return np.divide(kept, total, out=np.zeros_like(kept), where=total > 0)


def token_label(tokenizer, token_id: int, special_ids: frozenset[int] = frozenset()) -> str:
    """A target token as a label: no "▁"; "##" when it continues a word; a special token as it is."""
    piece = tokenizer.id_to_token(token_id)
    return piece_label(piece, starts_word(piece, character_level=tokenizer.is_character_level), token_id in special_ids)
