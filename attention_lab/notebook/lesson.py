"""attention-lab export MODEL SOURCE -o lesson.html: a decoding's views in one HTML file that works offline (a lesson to
hand out), as attention_lab.show(...).save(path) writes it."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from transformer.checkpoint import CheckpointError, error_line

from ..checks import InputError
from .view import show


def main(argv: list[str] | None = None, prog: str = "python -m attention_lab.notebook.lesson") -> int:
    parser = argparse.ArgumentParser(prog=prog, description=__doc__.split("\n")[0].split(": ", 1)[1])
    parser.add_argument("model", help="a bundled model's name (de-en, reverse), a checkpoint folder or a Hub repo id")
    parser.add_argument("source", help="the text to decode")
    parser.add_argument("-o", "--out", type=Path, default=Path("lesson.html"), help="the file (default lesson.html)")
    parser.add_argument("--strategy", choices=("greedy", "beam"), default="greedy", help="how to decode")
    parser.add_argument("--beam-size", type=int, default=4, help="hypotheses kept by beam search (1 to 16)")
    args = parser.parse_args(argv)
    try:
        view = show(args.model, args.source, args.strategy, args.beam_size)
        path = view.save(args.out)
    except (InputError, CheckpointError, OSError, ValueError) as err:
        print(f"attention-lab export: {error_line(err)}", file=sys.stderr)  # one line, whatever the cause
        return 2
    print(f"{path}: {view.name}, “{view.source}” → “{view.output}” ({path.stat().st_size / 1e6:.1f} MB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
