"""Information flow, timed: /flow (greedy decoding, one forward pass read at the hook points, the step's graph cut and
pruned) and /decoder_lens (the decoder run greedily on each encoder layer's output) on one 10-word de-en sentence, at
the app's one thread per request, with the library's parts of /flow on their own.

    python benchmarks/flow_speed.py [--write]    # --write: into benchmarks/RESULTS.md's "flow" block
    python benchmarks/flow_speed.py --quick      # once each: that it runs

Each endpoint is called as the app calls it (its function, through its Endpoint's Request); the times are the
median, min and max of REPEATS calls after one untimed call. The Flow tab's threshold and Show step, drawn in the
page, are timed in the browser table (benchmarks/browser_speed.py).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import torch

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from attention_lab.decoding.request import Request
from attention_lab.feature import Shared
from attention_lab.models.registry import load_models
from attention_lab.tabs import features
from benchmarks.browser_speed import TEN_WORDS
from benchmarks.results import put_block
from transformer import DecodingSession
from transformer.flow import flow

REPEATS = 10
GOAL_S = 0.5  # /flow on a 10-word sentence at one thread


def timed(fn, repeats: int) -> list[float]:
    fn()  # untimed: the first call warms the allocator and the kernels
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(1000 * (time.perf_counter() - start))
    return times


def endpoint(name: str, shared: Shared):
    found = next(e for feature in features() for e in feature.endpoints if e.name == name)
    return lambda *arguments: found.fn(Request(found, shared), *arguments)


def measure(repeats: int) -> dict[str, list[float]]:
    shared = Shared(load_models([]))
    pipeline = shared.registry.entry("de-en").pipeline
    src_ids = pipeline.tokenizer.encode(TEN_WORDS)
    tokens = list(DecodingSession(pipeline.model, src_ids).run())
    read = flow(pipeline.model, src_ids, tokens)
    step = len(tokens) // 2
    flow_call, lens_call = endpoint("flow", shared), endpoint("decoder_lens", shared)
    return {
        "decode": timed(lambda: DecodingSession(pipeline.model, src_ids).run(), repeats),
        "read": timed(lambda: flow(pipeline.model, src_ids, tokens), repeats),
        "graph": timed(lambda: read.graph(step).pruned(0.04), repeats),
        "flow": timed(lambda: flow_call("de-en", TEN_WORDS, step, 0.04), repeats),
        "flow_whole": timed(lambda: flow_call("de-en", TEN_WORDS, step, 0), repeats),
        "decoder_lens": timed(lambda: lens_call("de-en", TEN_WORDS), repeats),
    } | {"tokens": [len(tokens)], "source": [len(src_ids)], "step": [step]}


ROWS = (
    ("flow", "/flow, threshold 0.04 (the answer)"),
    ("flow_whole", "/flow, threshold 0 (the whole graph, unpruned)"),
    ("decode", "of which: greedy decoding"),
    ("read", "of which: one forward pass read at the hook points, every sublayer's edges (transformer.flow.flow)"),
    ("graph", "of which: the step's graph cut and pruned"),
    ("decoder_lens", "/decoder_lens: the decoder run greedily on each encoder layer's output"),
)


def table(times: dict[str, list[float]]) -> str:
    tokens, source, step = times["tokens"][0], times["source"][0], times["step"][0]
    title = (
        f"Information flow (`python benchmarks/flow_speed.py --write`): de-en, “{TEN_WORDS}” ({source} source "
        f"tokens, {tokens} written; /flow at step {step}), one thread, {len(times['flow'])} calls after a warm-up."
    )
    lines = [
        title,
        "",
        "| measure | median (ms) | min | max | goal |",
        "|---|---|---|---|---|",
    ]
    for name, words in ROWS:
        values = times[name]
        goal = ""
        if name == "flow":
            goal = f"{'✓' if statistics.median(values) <= 1000 * GOAL_S else '✗'} ≤ {GOAL_S:g} s"
        lines.append(f"| {words} | {statistics.median(values):.0f} | {min(values):.0f} | {max(values):.0f} | {goal} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--write", action="store_true", help="put the table into benchmarks/RESULTS.md")
    parser.add_argument("--quick", action="store_true", help="once each: that it runs")
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    times = measure(1 if args.quick else REPEATS)
    block = table(times)
    print(block)
    if args.write and not args.quick:
        put_block("flow", block)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
