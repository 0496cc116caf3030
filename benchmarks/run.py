"""Benchmarks: our Transformer against torch.nn.Transformer, KV-cached decoding, and the app's latency.

    python benchmarks/run.py            # the full run; writes benchmarks/RESULTS.md
    python benchmarks/run.py --quick    # a few repeats of small shapes: shows that the code runs (CI)

Machines are shared and noisy, so every comparison is measured side by side in one run, alternating the two
contenders, and reported as the ratio of medians.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
from pathlib import Path

os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")
REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

import torch
from app_speed import app_bench, crowd_bench, payload_bench, server_bench
from model_speed import inference_bench, training_step_bench
from results import with_blocks

from transformer import TransformerConfig


def machine() -> str:
    return (
        f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores, torch {torch.__version__}, "
        f"{torch.get_num_threads()} threads, Python {platform.python_version()}"
    )


Row = tuple[str, float, float, "float | None", str]  # measure, ours (ms), reference (ms), ratio bar, note


def configs(quick: bool) -> dict[str, TransformerConfig]:
    """The shipped de-en shape and the paper's base shape; a tiny one for the quick run."""
    if quick:
        tiny = TransformerConfig(
            src_vocab_size=100,
            tgt_vocab_size=100,
            d_model=32,
            n_heads=4,
            n_encoder_layers=1,
            n_decoder_layers=1,
            d_ff=64,
            max_len=80,
        )
        return {"tiny": tiny}
    deen = TransformerConfig.from_dict(json.loads((REPO / "checkpoints" / "de-en" / "config.json").read_text()))
    base = TransformerConfig(
        src_vocab_size=deen.src_vocab_size,
        tgt_vocab_size=deen.tgt_vocab_size,
        d_model=512,
        n_heads=8,
        n_encoder_layers=6,
        n_decoder_layers=6,
        d_ff=2048,
        dropout=0.1,
    )
    return {"de-en (shipped)": deen, "base (512, 6+6)": base}


def model_rows(shapes: dict[str, TransformerConfig], repeats: int, batch: int, length: int, steps: int) -> list[Row]:
    """Training steps against torch.nn.Transformer, then greedy decoding at 1 thread (the app's) and at all."""
    rows: list[Row] = []
    for name, cfg in shapes.items():
        t = training_step_bench(cfg, batch, length, repeats if not name.startswith("base") else max(3, repeats // 2))
        rows.append((f"training step, {name}, weights off", t["ours"], t["torch"], 1.10, ""))
        rows.append((f"training step, {name}, weights on", t["ours_weights"], t["torch"], None, ""))
    threads = torch.get_num_threads()
    # The app decodes with one thread per request; small decoding steps also pay a thread pool's fork/join.
    for n_threads in sorted({1, threads}):
        torch.set_num_threads(n_threads)
        inf = inference_bench(next(iter(shapes.values())), steps, repeats)
        tag = f"greedy {steps} tokens, {n_threads} thread{'s' if n_threads > 1 else ''}"
        same = "same tokens" if inf["same_tokens"] else "TOKENS DIFFER"
        rows.append((f"{tag}: KV cache vs recompute", inf["cached"], inf["recompute"], 0.5, same))
        rows.append((f"{tag}: KV cache vs torch.nn.Transformer", inf["cached"], inf["torch"], None, ""))
        rows.append((f"{tag}: recompute vs torch.nn.Transformer", inf["recompute"], inf["torch"], None, ""))
        step_tag = tag.replace(f"greedy {steps} tokens", "one cached step")
        rows.append((f"{step_tag}: position 64 vs position 8", inf["step_at_64"], inf["step_at_8"], None, ""))
    torch.set_num_threads(threads)
    return rows


def model_table(rows: list[Row]) -> list[str]:
    lines = ["| measure | ours (ms) | reference (ms) | ratio | bar |", "|---|---|---|---|---|"]
    for measure, ours, theirs, bar, note in rows:
        ratio = ours / theirs
        verdict = "" if bar is None else ("✓" if ratio <= bar else "✗") + f" ≤ {bar:.2f}"
        lines.append(f"| {measure} | {ours:.1f} | {theirs:.1f} | {ratio:.2f} | {verdict} {note} |".replace("  ", " "))
    return lines


def payload_notes(app: dict, quick: bool = False) -> list[str]:
    """What the page is sent per Run and per Step, on de-en and on opus-mt-de-en's shapes (`quick`: a tiny Marian's)."""
    notes = []
    for key, what in (
        ("de_en", "de-en (3+3 layers, 4 heads)"),
        ("opus", "a tiny Marian (2+2 layers, 4 heads)" if quick else "opus-mt-de-en's shapes (6+6 layers, 8 heads)"),
    ):
        notes.append(
            f"- Sent to the page, {what}, a {app[key + '_source']}-token source decoded to {app[key + '_steps']} "
            f"tokens: {app[key + '_run_bytes'] / 1024:.0f} KB for a Run (every kind, layer and head, 16-bit), "
            f"{app[key + '_step_bytes'] / 1024:.1f} KB for a Step (median)."
        )
    return notes


def app_report() -> list[str]:
    """The app's latency table and its memory and load notes (the full run only: it serves the real app)."""
    app = {**app_bench(calls=20), **server_bench(calls=21), **payload_bench(calls=20)}
    crowd = crowd_bench(users=32, requests=5, sessions=200)
    app_rows = [
        ("Run, 15-word sentence, server side (p50 / p95)", app["server_run_p50"], app["server_run_p95"], 400),
        ("one Step, server side (p50 / p95)", app["server_step_p50"], app["server_step_p95"], 100),
        ("Run, 15-word sentence, gradio_client round trip (p50 / p95)", app["run_p50"], app["run_p95"], None),
        ("one Step, gradio_client round trip (p50 / p95)", app["step_p50"], app["step_p95"], None),
        (
            "the page's message alone, per Run: the whole decoding as JSON (p50 / p95)",
            app["payload_p50"],
            app["payload_p95"],
            None,
        ),
    ]
    lines = ["", "| app measure | p50 (ms) | p95 (ms) | bar |", "|---|---|---|---|"]
    for measure, p50, p95, bar in app_rows:
        verdict = "" if bar is None else ("✓" if p95 <= bar else "✗") + f" ≤ {bar} ms"
        lines.append(f"| {measure} | {p50:.0f} | {p95:.0f} | {verdict} |")
    return [
        *lines,
        "",
        *payload_notes(app),
        (
            f"- Peak memory of the app process with both models loaded: {app['rss_loaded_mb']:.0f} MB at start, "
            f"{app['rss_peak_mb']:.0f} MB after the calls above."
        ),
        (
            f"- {crowd['users']} gradio_client users at once, {crowd['requests']} requests each (Run, Step and Back "
            f"on both models; `benchmarks/load.py`): {crowd['failures']} failures, {crowd['mismatches']} answers "
            f"that differ from the same requests made alone; latency p50 {crowd['p50']:.0f} ms, p95 "
            f"{crowd['p95']:.0f} ms (queued: 2 requests decode at once)."
        ),
        (
            f"- Heavy work in its own lane: /translate of a short sentence took {crowd['lane_alone']:.0f} ms alone and "
            f"{crowd['lane_loaded']:.0f} ms beside {crowd['lane_clients']} clients calling /ablate on a 25-word "
            f"sentence without pause ({crowd['lane_loaded'] / crowd['lane_alone']:.2f}×; "
            f"{'✓' if crowd['lane_loaded'] <= 3 * crowd['lane_alone'] else '✗'} ≤ 3×)."
        ),
        (
            f"- App memory (RSS) over new sessions, each a Run and a Step: {crowd['rss_before']:.0f} MB after 10, "
            f"{crowd['rss_after']:.0f} MB after {crowd['sessions']} more, {crowd['rss_again']:.0f} MB after "
            f"{crowd['sessions']} more again (at most {crowd['capacity']} sessions are kept)."
        ),
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="tiny shapes and few repeats (a smoke run)")
    parser.add_argument("--out", type=Path, default=REPO / "benchmarks" / "RESULTS.md")
    args = parser.parse_args(argv)
    repeats = 3 if args.quick else 15
    batch, length = (4, 8) if args.quick else (32, 32)
    rows = model_rows(configs(args.quick), repeats, batch, length, steps=16 if args.quick else 64)
    lines = [
        "# Benchmark results\n",
        (
            f"Machine: {machine()}. Medians of {repeats} interleaved repeats "
            f"({max(3, repeats // 2)} for the base config){' (quick mode: tiny shapes)' if args.quick else ''}; "
            f"batch {batch} × {length} tokens for training.\n"
        ),
        *model_table(rows),
    ]
    if args.quick:  # the app's timings run too, briefly, so that they stay runnable
        app = {**server_bench(calls=3), **payload_bench(calls=2, quick=True)}
        lines.append(
            f"\nApp (quick): server Run p50 {app['server_run_p50']:.0f} ms, Step p50 {app['server_step_p50']:.0f} ms; "
            f"the page's message p50 {app['payload_p50']:.0f} ms."
        )
        lines += payload_notes(app, quick=True)
    else:
        lines += app_report()
    report = "\n".join(lines) + "\n"
    print(report)
    if not args.quick:
        args.out.write_text(with_blocks(report, args.out), encoding="utf-8")  # the browser and transformers tables stay
    return 0


if __name__ == "__main__":
    sys.exit(main())
