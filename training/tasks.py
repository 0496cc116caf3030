"""What each task trains and validates on, and its vocabulary."""

from __future__ import annotations

import random

from transformer.tokenizer import Tokenizer

from .data import ding_split, libreoffice_pairs
from .presets import Preset
from .reversal import REVERSAL_ALPHABET, reversal_pairs

Pairs = list[tuple[str, str]]


def load_task_data(
    task: str, epoch: int, preset: Preset, seed: int, focus: bool = False, sentences: Pairs | None = None
) -> Pairs:
    """One epoch's training pairs; `sentences` replaces the Ding training sentences (their distilled version)."""
    if task == "reverse":  # a fresh sample each epoch: the task has unlimited data
        return reversal_pairs(preset.train_size, 1, 24, seed=seed * 1000 + epoch)
    pairs = sentences or ding_split("train")
    rng = random.Random(seed * 1000 + epoch)
    n_phrases = preset.focus_phrases_per_epoch if focus else preset.phrases_per_epoch
    if n_phrases:  # the dictionary's words and phrases: vocabulary the 17k sentences lack
        phrases = ding_split("phrases")
        pairs = pairs + rng.sample(phrases, min(n_phrases, len(phrases)))
    if preset.libreoffice_per_epoch and not focus:  # another domain's sentences: grammar the 17k sentences lack
        extra = libreoffice_pairs()
        pairs = pairs + rng.sample(extra, min(preset.libreoffice_per_epoch, len(extra)))
    return pairs


def validation_data(task: str) -> Pairs:
    if task == "reverse":
        return reversal_pairs(500, 1, 24, seed=999_999)
    return ding_split("valid")


def build_tokenizer(task: str, preset: Preset) -> Tokenizer:
    if task == "reverse":
        return Tokenizer.characters(REVERSAL_ALPHABET)
    pairs = ding_split("train")
    return Tokenizer.train_bpe([text for pair in pairs for text in pair], preset.vocab_size)
