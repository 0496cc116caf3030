"""Where the models run: cpu, cuda, or auto (a CUDA GPU when there is one), for the app and the head survey."""

from __future__ import annotations

import os

import torch

from ..checks import InputError

DEVICES = ("auto", "cpu", "cuda")
DTYPES = {"float32": torch.float32, "bfloat16": torch.bfloat16}


def pick_device(name: str) -> torch.device:
    """cpu, cuda (InputError when there is none) or auto (cuda when there is one); under torchrun, this process's
    GPU."""
    if name not in DEVICES:
        raise InputError(f"--device must be one of {', '.join(DEVICES)} (got {name!r})")
    if name == "cuda" and not torch.cuda.is_available():
        raise InputError("--device cuda: no CUDA GPU is available here (use --device cpu or auto)")
    if name == "cpu" or not torch.cuda.is_available():
        return torch.device("cpu")
    return torch.device("cuda", int(os.environ.get("LOCAL_RANK", "0")))
