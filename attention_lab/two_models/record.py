"""Two models' cross-attention on one source, in words, as JSON (/compare_models): each model's rows over model A's
source words, and the distance between the two rows at each output word the two have in common."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .align import distance, shared_words
from .words import WordAttention, character_map, on_words

DECIMALS = 6


@dataclass
class ModelWords:
    """One model's decoding of the source, in words."""

    model: str  # as it was asked for ("reverse@step 1,200" for a training snapshot)
    output_tokens: list[str]  # as /attention's output_tokens (the end token last, when written)
    output_words: list[str]  # its words without the special tokens, labelled as they read
    attention: list[list[float]]  # [output word][source word]: the mean over layers and heads; a row sums to 1
    layers: list[list[list[float]]]  # [layer][output word][source word]: the mean over the layer's heads


@dataclass
class SharedWord:
    word: str
    a: int  # its index in model A's output_words
    b: int  # in model B's
    distance: float  # the Jensen–Shannon distance (base 2) between the two rows: 0 identical, 1 disjoint


@dataclass
class TwoModels:
    source_words: list[str]  # model A's words of the source, special tokens left out
    models: list[ModelWords]  # A, then B
    shared: list[SharedWord]  # in the order of the outputs


def rounded(values: np.ndarray) -> list:
    return np.round(values, DECIMALS).tolist()


def model_words(name: str, found: WordAttention) -> ModelWords:
    return ModelWords(name, found.output_tokens, found.output_words, rounded(found.attention), rounded(found.layers))


def two_models_record(name_a: str, a: WordAttention, name_b: str, b: WordAttention) -> TwoModels:
    """A and B compared: B's rows moved onto A's source words (one to one when the two read the same words, else
    by the characters they share), and the distance at each word the two outputs share."""
    b = on_words(b, character_map(b.source_words, a.source_words), a.source_words)
    pairs = shared_words(a.output_words, b.output_words)
    shared = [
        SharedWord(a.output_words[i], i, j, round(distance(a.attention[i], b.attention[j]), DECIMALS)) for i, j in pairs
    ]
    return TwoModels(a.source_words, [model_words(name_a, a), model_words(name_b, b)], shared)
