"""One decoding's cross-attention in words, as the views draw it with words merged and special tokens hidden
(attention_lab.core.units): for each output word, how much it looked at each source word.

Step t's cross-attention row is the one that wrote output token t. A head's row for a word is the mean over its
pieces' rows, its column the sum over its pieces' columns; the special tokens' rows and columns are dropped and each
row renormalised to sum to 1; the mean of a layer (or of all heads) is the mean of those rows: what the Attention tab
shows with words merged and special tokens hidden (attention_lab/assets/units.mjs: inUnits, head). A word's row
averages all its pieces' rows, the ones written after the shown step's too. The words are the views' own
(attention_lab.core.units.word_groups), labelled as they read (word_label).

Key: T output tokens written (the end token last, if written), S source tokens, L decoder layers, H heads; W the
output's words and V the source's, specials left out.
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass

import numpy as np

from transformer import DecodingSession, Seq2SeqPipeline

from ..checks import InputError
from ..core.units import SPACE, source_words, word_label

DIFFERENT = (
    "The two models read this source as different characters (an unknown token, or another normalisation), so their "
    "source words cannot be lined up."
)


@dataclass(frozen=True)
class WordAttention:
    """A decoding's cross-attention between its output's words and its source's."""

    source_words: list[str]  # V labels
    output_tokens: list[str]  # T, spelled as the tokenizer spells them (the end token included)
    output_words: list[str]  # W labels
    attention: np.ndarray  # (W, V): the mean over layers and heads; each row sums to 1
    layers: np.ndarray  # (L, W, V): the mean over each layer's heads; each row sums to 1
    heads: np.ndarray  # (L, H, W, V): each head's own; each row sums to 1
    token_words: list[int]  # T: the output word each token is a piece of (-1 for a special token)


def merge_matrix(groups: list[list[int]], n: int, mean: bool) -> np.ndarray:
    """(len(groups), n): row g averages (mean) or sums the entries of group g's pieces."""
    matrix = np.zeros((len(groups), n))
    for g, pieces in enumerate(groups):
        matrix[g, pieces] = 1.0 / len(pieces) if mean else 1.0
    return matrix


def renormalised(rows: np.ndarray) -> np.ndarray:
    """Each row divided by its sum (a row of zeros stays zeros)."""
    total = rows.sum(axis=-1, keepdims=True)
    return np.divide(rows, total, out=np.zeros_like(rows), where=total > 0)


def word_attention(session: DecodingSession, pipeline: Seq2SeqPipeline) -> WordAttention:
    """The session's cross-attention in words (see the module's docstring)."""
    tokenizer = pipeline.tokenizer
    src_pieces, out_pieces = tokenizer.tokens(session.src_ids), tokenizer.tokens(session.tokens)
    src_groups, out_groups = source_words(pipeline, session.src_ids), source_words(pipeline, session.tokens)
    n_layers, n_src = pipeline.model.config.n_decoder_layers, len(session.src_ids)
    if session.steps:
        cross = np.stack([np.stack([w.numpy() for w in s.cross_attention]) for s in session.steps])  # (T, L, H, S)
        per_head = cross.transpose(1, 2, 0, 3).astype(np.float64)  # (L, H, T, S)
    else:
        n_heads = pipeline.model.config.n_heads
        per_head = np.zeros((n_layers, n_heads, 0, n_src))
    rows = merge_matrix(out_groups, len(session.steps), mean=True)  # (W, T)
    cols = merge_matrix(src_groups, n_src, mean=False).T  # (S, V)
    heads = renormalised(rows @ per_head @ cols)  # (L, H, W, V)
    token_words = [-1] * len(session.tokens)
    for w, pieces in enumerate(out_groups):
        for t in pieces:
            token_words[t] = w
    return WordAttention(
        source_words=[word_label([src_pieces[i] for i in g]) for g in src_groups],
        output_tokens=out_pieces,
        output_words=[word_label([out_pieces[i] for i in g]) for g in out_groups],
        attention=heads.mean(axis=(0, 1)),  # (W, V)
        layers=heads.mean(axis=1),  # (L, W, V)
        heads=heads,
        token_words=token_words,
    )


def letters(word: str) -> str:
    """A word's characters as both models' source words are compared: NFKC, case-folded, without spaces (a lone
    word boundary, labelled "␣", has none)."""
    text = "" if word == SPACE else unicodedata.normalize("NFKC", word).casefold()
    return "".join(text.split())


def character_map(words_b: list[str], words_a: list[str]) -> np.ndarray:
    """(len(words_b), len(words_a)): how a weight on each of B's source words is split over A's, in proportion to
    the characters they share; each row sums to 1. Equal words map one to one. InputError if the two spell the
    source with different characters (an unknown token, another normalisation)."""
    if words_a == words_b:
        return np.eye(len(words_a))
    spelled_a, spelled_b = [letters(w) for w in words_a], [letters(w) for w in words_b]
    if "".join(spelled_a) != "".join(spelled_b):
        raise InputError(DIFFERENT)
    owner = np.repeat(np.arange(len(words_a)), [len(w) for w in spelled_a])  # A's word of each character
    mapping, at = np.zeros((len(words_b), len(words_a))), 0
    for j, word in enumerate(spelled_b):
        if word:
            np.add.at(mapping[j], owner[at : at + len(word)], 1.0 / len(word))
        elif len(owner):  # no characters of its own: its weight goes to the word its place falls in
            mapping[j, owner[min(at, len(owner) - 1)]] = 1.0
        at += len(word)
    return mapping


def on_words(found: WordAttention, mapping: np.ndarray, source: list[str]) -> WordAttention:
    """`found` with its rows over other source words (`source`), through a character_map."""
    attention, layers, heads = found.attention @ mapping, found.layers @ mapping, found.heads @ mapping
    return WordAttention(source, found.output_tokens, found.output_words, attention, layers, heads, found.token_words)
