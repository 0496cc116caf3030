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

import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from attention_lab.feature import Shared
from attention_lab.models.registry import load_models
from attention_lab.request import Request
from attention_lab.tabs import features
from benchmarks.browser_speed import TEN_WORDS
from benchmarks.endpoint_timing import WARMED, median_table, timed
from benchmarks.endpoint_timing import main as run
from transformer import DecodingSession
from transformer.flow import flow

REPEATS = 10
GOAL_S = 0.5  # /flow on a 10-word sentence at one thread


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
    tokens, source, step, calls = times["tokens"][0], times["source"][0], times["step"][0], len(times["flow"])
    title = (
        f"Information flow (`python benchmarks/flow_speed.py --write`): de-en, “{TEN_WORDS}” ({source} source "
        f"tokens, {tokens} written; /flow at step {step}), one thread, {calls} calls{WARMED[calls > 1]}."
    )
    return median_table(title, ROWS, times, ("flow", GOAL_S))


def main(argv: list[str] | None = None) -> int:
    return run(__doc__, "flow", lambda repeats: table(measure(repeats)), argv, REPEATS)


if __name__ == "__main__":
    raise SystemExit(main())
