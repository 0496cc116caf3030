"""How much of the machine the app may use."""

from __future__ import annotations

import os
from pathlib import Path


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
