"""The training run's state in one object, and how it is saved for --resume (safetensors and JSON, never pickle)."""

from __future__ import annotations

import argparse
import json
import math
import time
from collections import deque
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from pathlib import Path

import torch
from safetensors.torch import load_file, save_file
from torch import nn

from transformer import Seq2SeqPipeline, Transformer
from transformer.checkpoint import load_weights
from transformer.tokenizer import Tokenizer

from .presets import Preset


@dataclass
class Progress:
    """How far the run has come; saved in state.json, so that a resumed run goes on from here."""

    step: int = 0
    epoch: int = 0
    batch_in_epoch: int = 0  # batches of the current epoch already trained on
    best: float = -math.inf  # the best validation score so far (BLEU, or exact match for reversal)
    seconds: float = 0.0  # training time, resumed parts included
    history: list[dict] = field(default_factory=list)  # every validation's metrics
    best_metrics: dict = field(default_factory=dict)  # the metrics (and step) of the weights in --out


@dataclass
class TrainState:
    """Everything the training loop carries from step to step."""

    args: argparse.Namespace  # the command line: task, out, run_dir, max_steps, ...
    preset: Preset  # the recipe, with the command line's overrides
    device: torch.device
    rank: int  # this process, of `world` (torchrun); 0 validates and saves
    world: int
    tokenizer: Tokenizer
    model: Transformer
    wrapped: nn.Module  # the model, or its DistributedDataParallel wrapper: what the training step calls
    optimizer: torch.optim.Optimizer
    autocast: AbstractContextManager  # bfloat16 autocast for the forward pass, or a no-op
    progress: Progress
    run_dir: Path  # the resumable state: last/ (weights and tokenizer), optimizer.safetensors, state.json
    valid: list[tuple[str, str]]  # the validation pairs
    started: float  # wall-clock start (time.time()), less the time of resumed parts
    recent_weights: list[dict[str, torch.Tensor]] = field(default_factory=list)  # last validations', for averaging
    distilled: list[tuple[str, str]] | None = None  # the distillation targets, once their window has opened
    snapshot_steps: list[int] = field(default_factory=list)  # when this process takes a snapshot (--snapshots)
    losses: deque[float] = field(default_factory=lambda: deque(maxlen=100))  # the last updates' training losses

    @property
    def is_main(self) -> bool:
        return self.rank == 0

    @property
    def distributed(self) -> bool:
        return self.world > 1

    def elapsed(self) -> float:
        return time.time() - self.started

    def train_loss(self) -> float | None:
        """The mean training loss (label-smoothed, as optimised) of the last updates; None before the first."""
        return sum(self.losses) / len(self.losses) if self.losses else None


def save_best(state: TrainState) -> None:
    """The current weights become the checkpoint in --out."""
    Seq2SeqPipeline(state.model, state.tokenizer).save_pretrained(state.args.out)


def save_state(state: TrainState) -> None:
    """Everything --resume needs, without pickle: weights and optimizer tensors as safetensors, the rest as JSON."""
    run_dir = state.run_dir
    run_dir.mkdir(parents=True, exist_ok=True)
    Seq2SeqPipeline(state.model, state.tokenizer).save_pretrained(run_dir / "last")
    optimizer = state.optimizer.state_dict()
    tensors = {
        f"{i}.{name}": value.contiguous() for i, slots in optimizer["state"].items() for name, value in slots.items()
    }
    save_file(tensors, str(run_dir / "optimizer.safetensors"))
    meta = {"progress": state.progress.__dict__, "param_groups": optimizer["param_groups"], "args": vars(state.args)}
    (run_dir / "state.json").write_text(json.dumps(meta, indent=1, default=str))


def load_state(run_dir: Path, model: Transformer, optimizer: torch.optim.Optimizer) -> Progress:
    """Fill `model` and `optimizer` from a run dir that save_state wrote; returns the progress it had made."""
    load_weights(model, run_dir / "last")
    meta = json.loads((run_dir / "state.json").read_text())
    tensors = load_file(str(run_dir / "optimizer.safetensors"))
    slots: dict[int, dict[str, torch.Tensor]] = {}
    for key, value in tensors.items():
        index, name = key.split(".", 1)
        slots.setdefault(int(index), {})[name] = value
    optimizer.load_state_dict({"state": slots, "param_groups": meta["param_groups"]})
    return Progress(**meta["progress"])
