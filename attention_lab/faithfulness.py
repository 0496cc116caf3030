"""python -m attention_lab.faithfulness --model M --data FILE [--limit N]: which to trust, attention or attribution? The
deletion test (attention_lab.why.deletion) over the sentences of FILE, one source per line (a tab and a reference after it
are allowed, and ignored), printed as a table."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from tqdm import tqdm

import attention_lab.adapters  # noqa: F401 - transformers encoder–decoders load through load_pretrained
from transformer import bundled, load_pretrained
from transformer.bundled import bundled_names
from transformer.checkpoint import error_line

from .why.deletion import deletion_table


def read_sources(path: Path, limit: int | None) -> list[str]:
    lines = [line.split("\t")[0].strip() for line in path.read_text(encoding="utf-8").splitlines()]
    sources = [line for line in lines if line]
    return sources[:limit] if limit else sources


def main(argv: list[str] | None = None, prog: str = "python -m attention_lab.faithfulness") -> int:
    parser = argparse.ArgumentParser(prog=prog, description=__doc__.split("\n")[0])
    parser.add_argument("--model", required=True, help="a bundled model's name, a checkpoint folder or a Hub repo id")
    parser.add_argument("--data", required=True, type=Path, help="one source per line (TSV: source, reference)")
    parser.add_argument("--limit", type=int, default=None, help="the first N sentences only")
    parser.add_argument("--seed", type=int, default=0, help="the random ranking's seed")
    args = parser.parse_args(argv)
    if not args.data.is_file():
        print(f"no such file: {args.data}", file=sys.stderr)
        return 2
    sources = read_sources(args.data, args.limit)
    if not sources:
        print(f"{args.data} has no sentences", file=sys.stderr)
        return 2
    try:
        pipeline = load_pretrained(str(bundled(args.model)) if args.model in bundled_names() else args.model)
    except Exception as err:  # noqa: BLE001 - any reason a model cannot load, said in one line
        print(f"cannot load the model: {error_line(err)}", file=sys.stderr)
        return 2
    table = deletion_table(pipeline, sources, args.seed, progress=lambda s: tqdm(s, desc="sentences", unit="sentence"))
    print(f"\nDeletion test: {args.model}, {table.sentences} sentences, {table.steps} steps.")
    print("Mean fall in the written token's probability when a ranking's top source tokens are removed:\n")
    print("\n".join(table.lines()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
