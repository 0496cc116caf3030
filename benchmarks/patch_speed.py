"""Patching, timed: /patch on a 10-word de-en sentence (its greedy decoding, the clean and corrupted runs, every
encoder state, decoder state and head restored on its own, the corrupted output), against one forced forward pass
(encode, and the decoder over the whole forced output) of the same model and sentence, in the same run.

    python benchmarks/patch_speed.py [--write]    # --write: into benchmarks/RESULTS.md
    python benchmarks/patch_speed.py --quick      # once: that it runs
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

from attention_lab.app import endpoints, make_lab
from attention_lab.models.registry import load_models
from benchmarks.results import put_block
from transformer import DecodingSession

CLEAN = "Der kleine Hund schläft heute im Garten hinter dem Haus."  # 10 words, 15 tokens
CORRUPTED = "Der kleine Patient schläft heute im Garten hinter dem Haus."  # one word swapped, as many tokens


def median_ms(fn, repeats: int, warm: bool = True) -> tuple[float, float, float]:
    """(min, median, max) milliseconds of `repeats` calls, after one unmeasured call when `warm` (the quick run, which
    only shows that it runs, times its first call)."""
    if warm:
        fn()
    runs = []
    for _ in range(repeats):
        started = time.perf_counter()
        fn()
        runs.append(1000 * (time.perf_counter() - started))
    return min(runs), statistics.median(runs), max(runs)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--write", action="store_true", help="put the table into benchmarks/RESULTS.md")
    parser.add_argument("--quick", action="store_true", help="timed once, with no warm-up call")
    args = parser.parse_args(argv)
    registry = load_models([])
    api, pipeline = endpoints(make_lab(registry)), registry.entry("de-en").pipeline
    model, ids = pipeline.model, pipeline.tokenizer.encode(CLEAN)
    assert len(pipeline.tokenizer.encode(CORRUPTED)) == len(ids)
    tokens = DecodingSession(model, ids).run()
    src, tgt = torch.tensor([ids]), torch.tensor([[model.config.bos_id, *tokens[:-1]]])

    @torch.no_grad()
    def forward():
        enc = model.encode(src)
        model.project(model.decode(tgt, enc.memory, enc.src_mask).hidden)

    repeats = 1 if args.quick else 7
    cfg = model.config
    rows = cfg.n_encoder_layers * len(ids) + cfg.n_decoder_layers * len(tokens)
    rows += cfg.n_heads * (cfg.n_encoder_layers + 2 * cfg.n_decoder_layers)
    title = (
        f"Patching (`python benchmarks/patch_speed.py`): /patch on a 10-word de-en sentence ({len(ids)} source "
        f"tokens, {len(tokens)} steps, {rows} parts each restored on its own), against one forced forward pass of "
        f"the same sentence in the same run; milliseconds, min / median / max of {repeats}."
    )
    lines = [
        title,
        "",
        "| threads | corruption | /patch ms | one forward pass ms | ratio | bar |",
        "|---|---|---|---|---|---|",
    ]
    for threads in (1, 2):
        torch.set_num_threads(threads)
        one = median_ms(forward, repeats, warm=not args.quick)
        for name, call in [
            ("a swapped word", lambda: api.patch("de-en", CLEAN, CORRUPTED)),
            ("noise on a word", lambda: api.patch("de-en", CLEAN, "", [3])),
        ]:
            taken = median_ms(call, repeats, warm=not args.quick)
            verdict = "✓ ≤ 2 s" if taken[1] <= 2000 else "✗ > 2 s"
            lines.append(
                f"| {threads} | {name} | {taken[0]:.0f} / {taken[1]:.0f} / {taken[2]:.0f} | "
                f"{one[0]:.1f} / {one[1]:.1f} / {one[2]:.1f} | {taken[1] / one[1]:.0f}× | {verdict} |"
            )
    table = "\n".join(lines)
    print(table)
    if args.write and not args.quick:
        put_block("patch", table)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
