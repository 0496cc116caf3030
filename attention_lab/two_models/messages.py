"""Two models' cross-attention on one source, in words, as JSON: /compare_models's answer (each model's rows over
model A's source words, and the distance between the two rows at each output word the two have in common), and the
Two models tab's message, which also holds each head's rows."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Literal

import numpy as np
from pydantic import Field

from ..core.payload import q16
from ..decoding.messages import Key
from .align import distance, shared_words
from .words import WordAttention, character_map, on_words

DECIMALS = 6


@dataclass
class ModelWords:
    """One model's decoding of the source, in words."""

    model: str  # its name; a training snapshot's as the Training tab labels it ("reverse@step 1,269")
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


def lined_up(a: WordAttention, b: WordAttention) -> WordAttention:
    """B's rows moved onto A's source words: one to one when the two read the same words, else by the characters
    they share."""
    return on_words(b, character_map(b.source_words, a.source_words), a.source_words)


def shared_of(a: WordAttention, b: WordAttention) -> list[SharedWord]:
    """The words two outputs share, with the distance between the two rows at each (B lined up on A's words)."""
    pairs = shared_words(a.output_words, b.output_words)
    return [
        SharedWord(a.output_words[i], i, j, round(distance(a.attention[i], b.attention[j]), DECIMALS)) for i, j in pairs
    ]


def two_models_record(name_a: str, a: WordAttention, name_b: str, b: WordAttention) -> TwoModels:
    """A and B compared: B lined up on A's source words, and the distance at each word the two outputs share."""
    b = lined_up(a, b)
    return TwoModels(a.source_words, [model_words(name_a, a), model_words(name_b, b)], shared_of(a, b))


@dataclass
class ModelSide:
    """One model's side of the Two models tab: its words, and every row the tab can show, packed."""

    model: str
    tokens: list[str]  # its output's tokens as the views label them (the end token last, when written)
    words: list[str]  # its output's words, special tokens left out
    token_words: list[int]  # per token: the word it is a piece of (-1: a special token)
    layers: int
    heads: int
    # base64 of uint16 round(w · 65535), C order, (1 + L + L · H, W, V): the mean over layers and heads, each layer's
    # mean over its heads, then each head's (layer by layer); a row sums to 1 over the source words
    rows: str


@dataclass
class TwoModelsMessage:
    """The Two models tab's page module is sent both sides once per decoding: Show step, the keys, the heads and the
    words clicked redraw it with no request (two_models/pair.mjs)."""

    key: Key | None  # model A's decoding, the page's
    tokens: list[int]  # the decoding it read: model A's tokens
    source_words: list[str]
    models: list[ModelSide]  # A (the page's model), then B (the second model)
    shared: list[SharedWord]
    error: Annotated[str | None, Field(exclude_if=lambda value: value is None)] = None
    op: Literal["two_models"] = "two_models"


def model_side(name: str, found: WordAttention, tokens: list[str]) -> ModelSide:
    L, H = found.heads.shape[:2]
    stack = np.concatenate([found.attention[None], found.layers, found.heads.reshape(L * H, *found.heads.shape[2:])])
    return ModelSide(name, tokens, found.output_words, found.token_words, L, H, q16(stack))


def two_models_message(key: Key | None, tokens: list[int], a: tuple, b: tuple) -> TwoModelsMessage:
    """The tab's message for model A's decoding (`tokens`) and model B's; each of `a` and `b` is (name,
    WordAttention, its tokens' labels)."""
    (name_a, found_a, labels_a), (name_b, found_b, labels_b) = a, b
    found_b = lined_up(found_a, found_b)
    sides = [model_side(name_a, found_a, labels_a), model_side(name_b, found_b, labels_b)]
    return TwoModelsMessage(key, list(tokens), found_a.source_words, sides, shared_of(found_a, found_b))
