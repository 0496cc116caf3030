"""What changes over a run: the learning rate, and the windows counted back from --max-steps."""

from __future__ import annotations

import math

from .presets import Preset


def learning_rate(step: int, preset: Preset, max_steps: int = 0) -> float:
    """Linear warm-up to preset.lr, then inverse square-root decay (Vaswani et al. 2017); with anneal_steps and
    max_steps, a linear decay to zero over the last anneal_steps steps (a short final cool-down lowers the loss)."""
    step = max(step, 1)
    lr = preset.lr * min(step / preset.warmup, math.sqrt(preset.warmup / step))
    if preset.anneal_steps and max_steps:
        lr *= min(1.0, max(max_steps - step + 1, 0) / preset.anneal_steps)
    return lr


def in_window(step: int, steps: int, max_steps: int) -> bool:
    """Whether `step` lies in the last `steps` steps before `max_steps` (the in-domain finish, or distillation)."""
    return bool(steps and max_steps and step >= max_steps - steps)


def regularization(preset: Preset, focus: bool) -> tuple[float, float]:
    """(dropout, source word dropout) for the current stage: the in-domain finish may set its own."""
    dropout, word_p = preset.dropout, preset.word_dropout
    if focus:
        dropout = dropout if preset.focus_dropout is None else preset.focus_dropout
        word_p = word_p if preset.focus_word_dropout is None else preset.focus_word_dropout
    return dropout, word_p
