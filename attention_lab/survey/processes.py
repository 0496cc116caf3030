"""Where a survey runs: under torchrun, its share of the corpus (the device is attention_lab.models.devices').

    torchrun --nproc_per_node 2 -m attention_lab.survey ...   # the launcher training uses; each process takes every 2nd batch

Each process decodes its batches; the results are gathered to every process, so each computes the same pruning
order, and the first writes the files. On a CPU the processes share the cores; on GPUs each takes its own.
"""

from __future__ import annotations

import datetime
import os
from dataclasses import dataclass

import torch
import torch.distributed as dist

from ..models.devices import available_cores


@dataclass(frozen=True)
class Processes:
    rank: int = 0
    world: int = 1

    @property
    def first(self) -> bool:
        return self.rank == 0

    def mine(self, n: int) -> list[int]:
        """The indices of this process's items among n: every world-th, from its rank."""
        return list(range(self.rank, n, self.world))

    def gather(self, part: dict) -> dict:
        """Every process's dict merged (keys are disjoint: item indices), on every process."""
        if self.world == 1:
            return part
        parts: list[dict | None] = [None] * self.world
        dist.all_gather_object(parts, part)
        return {key: value for p in parts for key, value in p.items()}

    def close(self) -> None:
        if self.world > 1:
            dist.destroy_process_group()


def start(device: torch.device) -> Processes:
    """One process, or this one's place among torchrun's (a process group over gloo, or NCCL on GPUs); a CPU's
    cores are shared among the processes on this machine."""
    world = int(os.environ.get("WORLD_SIZE", "1"))
    local = int(os.environ.get("LOCAL_WORLD_SIZE", str(world)))
    if device.type == "cpu":
        torch.set_num_threads(max(1, available_cores() // local))
    if world <= 1:
        return Processes()
    if device.type == "cuda":
        torch.cuda.set_device(device)
    backend = "nccl" if device.type == "cuda" else "gloo"
    dist.init_process_group(backend, timeout=datetime.timedelta(hours=1))
    return Processes(dist.get_rank(), dist.get_world_size())
