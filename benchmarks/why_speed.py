"""Why this token, timed: milliseconds per decoding step for each attribution method and for the decoder's lens, and
milliseconds per sentence for the DecoderLens (every encoder layer decoded, one batch), on de-en and on a transformers
model of opus-mt-de-en's shapes (random weights, benchmarks/shaped_models.py), at the app's one thread per request.

    python benchmarks/why_speed.py [--no-large] [--write]    # --write: into benchmarks/RESULTS.md
    python benchmarks/why_speed.py --quick                   # de-en only, once: that it runs
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

import attention_lab.adapters  # noqa: F401 - transformers encoder–decoders load through load_pretrained
from attention_lab.attribution.methods import METHODS, attribute
from benchmarks.browser_speed import LARGE_MODELS, STEP_TEXT, large_model
from benchmarks.results import put_block
from transformer import DecodingSession, bundled, load_pretrained
from transformer.decoderlens import decoderlens
from transformer.lens import decoder_lens

SENTENCE = "Bitte schließen Sie das Fenster, wenn es draußen regnet."
DECODERLENS_LIMIT = 64  # /decoder_lens's new tokens, at most (its Limits)


def per_step_ms(model, ids: list[int], repeats: int = 3) -> dict[str, float]:
    session = DecodingSession(model, ids, max_new_tokens=24)
    tokens = session.run()
    times: dict[str, float] = {}
    for method in METHODS:
        runs = []
        for _ in range(repeats):
            started = time.perf_counter()
            attribute(model, ids, tokens, method, limit=session.max_new_tokens)
            runs.append(1000 * (time.perf_counter() - started) / len(tokens))
        times[method] = statistics.median(runs)
    runs = []
    for _ in range(repeats):
        started = time.perf_counter()
        decoder_lens(model, ids, tokens, max_new_tokens=session.max_new_tokens)
        runs.append(1000 * (time.perf_counter() - started) / len(tokens))
    times["lens"] = statistics.median(runs)
    times["steps"] = len(tokens)
    times["decoderlens"] = decoderlens_ms(model, ids, DECODERLENS_LIMIT, repeats)
    return times


def decoderlens_ms(model, ids: list[int], limit: int, repeats: int = 3) -> float:
    """Milliseconds for the DecoderLens of one sentence: what the Why tab computes once per source."""
    runs = []
    for _ in range(repeats):
        started = time.perf_counter()
        decoderlens(model, ids, limit)
        runs.append(1000 * (time.perf_counter() - started))
    return statistics.median(runs)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--no-large", action="store_true", help="leave out the opus-mt-shaped model")
    parser.add_argument("--write", action="store_true", help="put the table into benchmarks/RESULTS.md")
    parser.add_argument("--quick", action="store_true", help="de-en only, timed once")
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    models = {"de-en": (load_pretrained(str(bundled("de-en"))), SENTENCE)}
    if not (args.no_large or args.quick):
        models["opus-mt-de-en's shapes"] = (load_pretrained(str(large_model("opus"))), STEP_TEXT)
    title = (
        "Why this token (`python benchmarks/why_speed.py`): milliseconds per decoding step, 1 thread, medians of 3; "
        "the page attributes every step of a run once, a Step only the new one. The DecoderLens: milliseconds per "
        "sentence (the decoder run greedily from the embeddings and from every encoder layer, up to /decoder_lens's "
        "64 new tokens), made once per source."
    )
    lines = [
        title,
        "",
        "| model | steps | " + " | ".join(METHODS) + " | lens | DecoderLens (ms per sentence) |",
        "|---|---|" + "---|" * (len(METHODS) + 2),
    ]
    for name, (pipeline, text) in models.items():
        t = per_step_ms(pipeline.model, pipeline.tokenizer.encode(text), repeats=1 if args.quick else 3)
        cells = " | ".join(f"{t[m]:.0f}" for m in [*METHODS, "lens"])
        lines.append(f"| {name} | {t['steps']} | {cells} | {t['decoderlens']:.0f} |")
    table = "\n".join(lines)
    print(table + f"\n\nThe large model lives in {LARGE_MODELS}.")
    if args.write and not args.quick:
        put_block("why", table)
    return 0


if __name__ == "__main__":
    sys.exit(main())
