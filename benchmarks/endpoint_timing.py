"""What the endpoint benchmarks share (flow_speed.py, compare_models_speed.py): a call timed after an untimed one, the
table of medians with one row's goal, and the command line (--quick: once each, cold; --write: into RESULTS.md)."""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable

import torch

from benchmarks.results import put_block

WARMED = {True: " after a warm-up", False: ", cold"}  # how a table's calls were timed: several, or one (--quick)


def timed(fn: Callable[[], object], repeats: int) -> list[float]:
    """Milliseconds of `repeats` calls of `fn`, after one untimed call (it warms the allocator and the kernels); a
    single call (--quick: that it runs) is timed cold."""
    if repeats > 1:
        fn()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(1000 * (time.perf_counter() - start))
    return times


def median_table(title: str, rows: tuple, times: dict[str, list[float]], goal: tuple[str, float]) -> str:
    """`title`, then a row per (measure, words) of `rows`: median, min and max; the measure `goal[0]` is held to
    at most `goal[1]` seconds."""
    lines = [title, "", "| measure | median (ms) | min | max | goal |", "|---|---|---|---|---|"]
    for name, words in rows:
        values, mark = times[name], ""
        if name == goal[0]:
            mark = f"{'✓' if statistics.median(values) <= 1000 * goal[1] else '✗'} ≤ {goal[1]:g} s"
        lines.append(f"| {words} | {statistics.median(values):.0f} | {min(values):.0f} | {max(values):.0f} | {mark} |")
    return "\n".join(lines)


def main(doc: str, block: str, table: Callable[[int], str], argv: list[str] | None, repeats: int) -> int:
    """A benchmark's command: `table(repeats)` printed at one thread (the app's per request), and with --write put
    into RESULTS.md's `block`; --quick runs each call once, to show that it runs."""
    parser = argparse.ArgumentParser(description=doc.split("\n")[0])
    parser.add_argument("--write", action="store_true", help="put the table into benchmarks/RESULTS.md")
    parser.add_argument("--quick", action="store_true", help="once each: that it runs")
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    found = table(1 if args.quick else repeats)
    print(found)
    if args.write and not args.quick:
        put_block(block, found)
    return 0
