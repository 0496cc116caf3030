"""attention-lab export: what leaves the app to work without it.

attention-lab export MODEL SOURCE -o lesson.html     a decoding's views in one HTML file that works offline (a
                                                     lesson to hand out, as attention_lab.show(...).save writes it)
attention-lab export --live MODEL -o FILE.html|DIR/  the model decoding in the page (attention_lab.export.live)
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from transformer.checkpoint import CheckpointError, error_line

from ..checks import InputError
from . import live
from .lesson import decoded, first_look, page


def main(argv: list[str] | None = None, prog: str = "python -m attention_lab.export") -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if any(a == "--live" or a.startswith("--live=") for a in argv):
        return live.main(argv, prog=prog)
    parser = argparse.ArgumentParser(prog=prog, description="a decoding's views in one HTML file that works offline")
    parser.add_argument("model", help="a bundled model's name (de-en, reverse), a checkpoint folder or a Hub repo id")
    parser.add_argument("source", help="the text to decode")
    parser.add_argument("-o", "--out", type=Path, default=Path("lesson.html"), help="the file (default lesson.html)")
    parser.add_argument("--strategy", choices=("greedy", "beam"), default="greedy", help="how to decode")
    parser.add_argument("--beam-size", type=int, default=4, help="hypotheses kept by beam search (1 to 16)")
    parser.epilog = "attention-lab export --live MODEL -o FILE.html | DIR/: the model decoding in the page, no server"
    args = parser.parse_args(argv)
    try:
        done = decoded(args.model, args.source, args.strategy, args.beam_size)
        args.out.write_text(page(first_look(done.data()), done.name, done.source, done.output), encoding="utf-8")
    except (InputError, CheckpointError, OSError, ValueError) as err:
        print(f"attention-lab export: {error_line(err)}", file=sys.stderr)  # one line, whatever the cause
        return 2
    print(f"{args.out}: {done.name}, “{done.source}” → “{done.output}” ({args.out.stat().st_size / 1e6:.1f} MB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
