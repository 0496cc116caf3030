"""Each task's model shape and training recipe, declared once; the command line can override every field."""

from __future__ import annotations

import argparse
import dataclasses
from dataclasses import dataclass


@dataclass(frozen=True)
class Preset:
    """A task's model shape and training recipe; every field can be overridden on the command line."""

    d_model: int
    n_heads: int
    n_layers: int  # encoder and decoder each
    d_ff: int
    dropout: float
    max_len: int
    lr: float  # peak learning rate, reached after `warmup` steps, then decaying as 1/sqrt(step)
    warmup: int
    batch_tokens: int  # padded source or target tokens per batch (per process)
    epochs: int
    eval_every: int  # steps between validations
    label_smoothing: float = 0.1
    word_dropout: float = 0.0  # probability of replacing a source token by <unk> while training
    vocab_size: int = 0  # BPE vocabulary (joint German-English); 0 for the character vocabulary
    train_size: int = 0  # fresh random examples per epoch (reversal only)
    weight_decay: float = 0.01
    average_last: int = 1  # average the weights of the last N validations at the end
    phrases_per_epoch: int = 0  # dictionary word/phrase pairs sampled afresh each epoch (translation only)
    libreoffice_per_epoch: int = 0  # LibreOffice help sentence pairs sampled afresh each epoch (translation only)
    anneal_steps: int = 0  # decay the learning rate linearly to zero over the last N steps before --max-steps
    # In-domain finish: over the last N steps before --max-steps each epoch is the Ding sentences with fewer phrases
    # and no help pages, so that the end of training is spent on the kind of sentence the test split holds.
    focus_steps: int = 0
    focus_phrases_per_epoch: int = 0
    # By then the model underfits even its training sentences, so the finish may also train with less regularization.
    focus_dropout: float | None = None  # None: keep `dropout`
    focus_word_dropout: float | None = None  # None: keep `word_dropout`
    # Sequence-level self-distillation (Kim & Rush 2016): over the last N steps before --max-steps the Ding training
    # sentences' targets are the model's own beam-4 translations, made once when the window opens, so that greedy
    # decoding learns to follow beam search. Of the beam's 4 best, the one nearest the reference is kept (their
    # sequence-level interpolation), so that the model is not taught its own mistakes where the beam had it right.
    distill_steps: int = 0


PRESETS = {
    "reverse": Preset(
        d_model=128,
        n_heads=4,
        n_layers=2,
        d_ff=512,
        dropout=0.1,
        max_len=40,
        lr=1e-3,
        warmup=400,
        batch_tokens=3000,
        epochs=20,
        eval_every=500,
        train_size=50_000,
        average_last=3,
    ),
    # Low-resource recipe (Sennrich & Zhang 2019): a small joint BPE vocabulary, strong dropout and word dropout,
    # small batches (many updates per epoch), pre-LN for a high learning rate, checkpoint averaging.
    "de-en": Preset(
        d_model=256,
        n_heads=4,
        n_layers=3,
        d_ff=1024,
        dropout=0.3,
        max_len=128,
        lr=1e-3,
        warmup=1000,
        batch_tokens=1500,
        epochs=200,
        eval_every=600,
        word_dropout=0.1,
        vocab_size=4000,
        average_last=4,
        phrases_per_epoch=80_000,
        libreoffice_per_epoch=8_000,
        focus_phrases_per_epoch=20_000,
        focus_dropout=0.1,
        focus_word_dropout=0.0,
    ),
}

# The fields' annotations are strings (postponed evaluation); what each reads as on the command line.
_CLI_TYPES = {"int": int, "float": float, "float | None": float}


def add_override_arguments(parser: argparse.ArgumentParser) -> None:
    """One option per Preset field: --lr, --batch-tokens, --focus-dropout, ... (None: keep the preset's value)."""
    group = parser.add_argument_group("recipe overrides (default: the task's preset)")
    for field in dataclasses.fields(Preset):
        kind = _CLI_TYPES[field.type]
        group.add_argument(f"--{field.name.replace('_', '-')}", type=kind, metavar=kind.__name__.upper())


def with_overrides(preset: Preset, args: argparse.Namespace) -> Preset:
    """A copy of `preset` with every field the command line set."""
    given = {
        f.name: getattr(args, f.name) for f in dataclasses.fields(Preset) if getattr(args, f.name, None) is not None
    }
    return dataclasses.replace(preset, **given)
