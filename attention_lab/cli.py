"""attention-lab: serve the app, or run one of its commands.

    attention-lab [--host H] [--port P] [--share] [--model M ...] [--device D]   # the app (as python app.py)
    attention-lab survey --model M --data FILE --out DIR                          # every head over a corpus
    attention-lab faithfulness --model M --data FILE                              # the deletion test
    attention-lab space USER/SPACE [--dry-run]                                    # put the app on a Space
    attention-lab export MODEL SOURCE -o lesson.html                              # a lesson file, offline
    attention-lab export --live MODEL -o FILE.html | DIR/                         # the model decoding in the page

Each command is also `python -m attention_lab.<command>`, with the same flags.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys

os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")

COMMANDS = {  # name -> (module, what it does)
    "survey": ("attention_lab.survey.__main__", "every head over a corpus: survey.json, survey.html, pruning curves"),
    "faithfulness": ("attention_lab.faithfulness", "the deletion test: which ranking of the source to trust"),
    "space": ("attention_lab.space", "put the app on a Hugging Face Space"),
    "export": ("attention_lab.export.__main__", "a lesson file, or with --live a model decoding in the page"),
}


def serve_parser() -> argparse.ArgumentParser:
    from .models.devices import DEVICES

    epilog = "commands: " + "; ".join(f"attention-lab {name} ... ({what})" for name, (_, what) in COMMANDS.items())
    parser = argparse.ArgumentParser(
        prog="attention-lab", description="Attention Lab: see inside an encoder-decoder Transformer.", epilog=epilog
    )
    parser.add_argument(
        "--model",
        action="append",
        default=[],
        metavar="USER/REPO",
        help=(
            "also load this model: a Hugging Face Hub repo or a folder, in our format or a transformers "
            "encoder-decoder such as Helsinki-NLP/opus-mt-de-en (pip install -r requirements-hf.txt); repeatable"
        ),
    )
    parser.add_argument(
        "--device", default="cpu", choices=DEVICES, help="where the models run (auto: a CUDA GPU when there is one)"
    )
    host = os.environ.get("GRADIO_SERVER_NAME", "127.0.0.1")
    parser.add_argument("--host", default=host, help=f"the address to serve on (default {host})")
    port = int(os.environ.get("GRADIO_SERVER_PORT", "7860"))
    parser.add_argument("--port", type=int, default=port, help=f"the port (default {port}; GRADIO_SERVER_PORT)")
    parser.add_argument("--share", action="store_true", help="also serve on a public gradio.live link")
    return parser


def serve(argv: list[str]) -> None:
    args = serve_parser().parse_args(argv)  # first: --help and a mistyped flag answer before gradio is imported
    import torch

    from .app import build_demo, launch_options
    from .checks import InputError
    from .models.devices import available_cores
    from .models.registry import load_models
    from .page.wiring import CONCURRENCY

    logging.basicConfig(level=logging.INFO, format="%(message)s")
    # Each of the CONCURRENCY requests gets its share of the cores (1 thread each on a 2-core Space).
    torch.set_num_threads(max(1, available_cores() // CONCURRENCY))
    try:
        registry = load_models(args.model, device=args.device)
    except InputError as err:
        raise SystemExit(str(err)) from None
    build_demo(registry).launch(server_name=args.host, server_port=args.port, share=args.share, **launch_options())


def main(argv: list[str] | None = None) -> int | None:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] in COMMANDS:
        import importlib

        if argv[0] == "export":  # every feature registers the files a page copy carries for it (page_copy/extras.py)
            from . import tabs  # noqa: F401

        module = importlib.import_module(COMMANDS[argv[0]][0])
        return module.main(argv[1:], prog=f"attention-lab {argv[0]}")
    serve(argv)
    return None


if __name__ == "__main__":
    sys.exit(main())
