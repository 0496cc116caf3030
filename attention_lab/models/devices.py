"""Where the models run: cpu, cuda, or auto (a CUDA GPU when there is one), for the app and the head survey; and how
many of the machine's cores the app may use, and that every thread of the app's work uses that many."""

from __future__ import annotations

import os
from pathlib import Path

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


def available_cores(cpu_max: Path = Path("/sys/fs/cgroup/cpu.max")) -> int:
    """The CPUs this process may use: its affinity mask, capped by a cgroup CPU quota (how containers such as Spaces
    are limited, while os.cpu_count() reports the whole host)."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    try:
        quota, period = cpu_max.read_text().split()[:2]
        if quota != "max":
            cores = min(cores, max(1, int(quota) // int(period)))
    except (OSError, ValueError):
        pass  # no cgroup v2 quota to read
    return cores


def use_threads(threads: int) -> None:
    """This thread's torch work on `threads` threads. torch.set_num_threads sets the count a thread takes when it first
    computes, and that thread keeps it (OpenMP's count is per thread): a server's worker thread that first computed
    while the count was another (a test setting its own, the CLI before it settled) would keep that one, and float
    sums differ with the count. So the app's work sets its own count in whatever thread it runs."""
    if torch.get_num_threads() != threads:  # asking also settles this thread's count from the process's
        torch.set_num_threads(threads)
