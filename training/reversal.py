"""The synthetic reversal task: random strings of lowercase letters and digits, each paired with its reverse."""

from __future__ import annotations

import argparse
import random
import string
import sys
from pathlib import Path

REVERSAL_ALPHABET = string.ascii_lowercase + string.digits


REVERSAL_MAX_CHARS = 24  # the longest training string


def reversal_pairs(n: int, min_len: int = 1, max_len: int = REVERSAL_MAX_CHARS, seed: int = 0) -> list[tuple[str, str]]:
    """n seeded random strings of lowercase letters and digits, each paired with its reverse."""
    rng = random.Random(seed)
    pairs = []
    for _ in range(n):
        text = "".join(rng.choices(REVERSAL_ALPHABET, k=rng.randint(min_len, max_len)))
        pairs.append((text, text[::-1]))
    return pairs


SURVEY_SEED = 515_151  # fresh strings for the bundled model's head survey, distinct from every training seed


def main(argv: list[str] | None = None) -> int:
    """python -m training.reversal --out FILE [--n N] [--seed S]: fresh reversal pairs as a TSV (source, reverse)."""
    parser = argparse.ArgumentParser(prog="python -m training.reversal", description=main.__doc__.split(":")[1])
    parser.add_argument("--out", required=True, type=Path)
    parser.add_argument("--n", type=int, default=1000, help="how many strings (lengths 1-24)")
    parser.add_argument("--seed", type=int, default=SURVEY_SEED)
    args = parser.parse_args(argv)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text("".join(f"{s}\t{t}\n" for s, t in reversal_pairs(args.n, seed=args.seed)), encoding="utf-8")
    print(f"{args.n} reversal pairs -> {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
