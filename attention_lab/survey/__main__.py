"""python -m attention_lab.survey --model M --data FILE --out DIR: every head of a model surveyed over a corpus.

FILE is a TSV of source and, optionally, reference, one pair per line. The corpus is decoded greedily in batches,
plainly, with each head alone ablated, and pruned least needed first; DIR gets survey.json and survey.html, and the
terminal a summary. It runs unchanged under torchrun --nproc_per_node N, each process taking its share of the
batches.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import torch
from tqdm import tqdm

import attention_lab.adapters  # noqa: F401 - transformers encoder–decoders load through load_pretrained
from transformer import bundled, load_pretrained
from transformer.bundled import bundled_names
from transformer.checkpoint import error_line

from ..checks import InputError
from ..models.devices import DEVICES, DTYPES, pick_device
from ..models.registry import entry_of
from .corpus import read_corpus
from .processes import start
from .report import summary_lines, write_survey
from .run import survey


def parse_args(argv: list[str] | None, prog: str = "python -m attention_lab.survey") -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog=prog, description=__doc__.split("\n")[0])
    parser.add_argument("--model", required=True, help="a bundled model's name, a checkpoint folder or a Hub repo id")
    parser.add_argument("--data", required=True, type=Path, help="TSV: source[<tab>reference], one pair per line")
    parser.add_argument("--out", required=True, type=Path, help="the folder for survey.json and survey.html")
    parser.add_argument("--limit", type=int, default=None, help="the first N sentences only")
    parser.add_argument("--device", default="auto", choices=DEVICES, help="auto: a CUDA GPU when there is one")
    parser.add_argument("--dtype", default="float32", choices=sorted(DTYPES), help="bfloat16 halves the memory on GPUs")
    args = parser.parse_args(argv)
    if args.limit is not None and args.limit < 1:
        parser.error("--limit must be at least 1")
    return args


def writable(out: Path) -> None:
    """The output folder, made now (InputError when it cannot be), so that a long survey is not lost at the end."""
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise InputError(f"--out {out}: cannot make that folder ({err.strerror})") from None
    if not os.access(out, os.W_OK):
        raise InputError(f"--out {out}: cannot write there")


def main(argv: list[str] | None = None, prog: str = "python -m attention_lab.survey") -> int:
    args = parse_args(argv, prog)
    try:
        corpus = read_corpus(args.data, args.limit)
        device = pick_device(args.device)
    except InputError as err:
        print(err, file=sys.stderr)
        return 2
    spec = str(bundled(args.model)) if args.model in bundled_names() else args.model
    try:
        pipeline = load_pretrained(spec)
    except Exception as err:  # noqa: BLE001 - any reason a model cannot load, said in one line
        print(f"cannot load the model: {error_line(err)}", file=sys.stderr)
        return 2
    try:
        writable(args.out)
    except InputError as err:
        print(err, file=sys.stderr)
        return 2
    pipeline.model.to(device=device, dtype=DTYPES[args.dtype]).eval()
    processes = start(device)
    entry = entry_of(args.model, pipeline, spec)
    bar = lambda total: tqdm(total=total, desc="decoding", unit="sentence", unit_scale=False)
    started = time.perf_counter()
    result = survey(pipeline, corpus, args.model, entry.alignment, processes, bar if processes.first else None)
    if processes.first:
        paths = write_survey(result, args.out)
        took = time.perf_counter() - started
        print(f"\nHead survey of {args.model} on {device}, {processes.world} process(es), {took:.1f} s:")
        print("\n".join(f"  {line}" for line in summary_lines(result)))
        print("wrote " + ", ".join(str(p) for p in paths))
    processes.close()
    return 0


if __name__ == "__main__":
    with torch.inference_mode():
        sys.exit(main())
