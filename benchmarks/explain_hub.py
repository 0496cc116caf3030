"""The Flow tab made in the page for a large transformers model: an opus-mt-de-en-shaped Marian (random weights,
d_model 512, 6+6 layers, 8 heads, vocabulary 58,101; benchmarks/shaped_models.py) in its int8 page copy, on 10-word
sentences, each decoded 15 tokens.

    python benchmarks/explain_hub.py            # prints the table
    python benchmarks/explain_hub.py --write    # and puts it into benchmarks/RESULTS.md

The page's own module (flow/in_page.mjs, over the copy's flow graph) runs in Node on the runtime the page carries
(ONNX Runtime Web's WebAssembly, one thread), through the runner the tests compare it with the server by
(tests/js/explain_in_page.mjs); each sentence is new to it, so every row of the graph is computed. Beside it, the
server's own flow (transformer.flow) on the same decoding, one torch thread.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")
HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

from results import put_block
from shaped_models import SHAPES, shaped

RUNNER = HERE.parent / "tests" / "js" / "explain_in_page.mjs"
WORDS = (
    "Wo ist der Bahnhof ? Ich habe Hunger . Das Haus alt und klein Er liest ein Buch über Katzen Wir gehen morgen in "
    "die Stadt Kinder spielen im Garten Kannst du mir bitte helfen"
)
SENTENCES = (
    "Wir gehen morgen in die Stadt und kaufen ein Buch",
    "Das Haus ist alt und klein , Kinder spielen im Garten",
    "Kannst du mir bitte helfen ? Ich habe Hunger heute",
)
TOKENS = 15


def copied(work: Path, precision: str):
    """(the opus-shaped pipeline, its page copy's folder in `precision`, the export's seconds, the copy's config)."""
    import attention_lab.adapters  # noqa: F401 - the transformers families load through load_pretrained
    from attention_lab.page_copy.copies import copy_files
    from transformer import load_pretrained

    shape, vocab = SHAPES["opus"]
    pipeline = load_pretrained(str(shaped("marian", work / "opus", shape, vocab, WORDS, max_length=32)))
    began = time.perf_counter()
    files = copy_files(pipeline, "opus", precision)
    exported = time.perf_counter() - began
    copy = work / "copy"
    copy.mkdir()
    for name, data in files.items():
        (copy / name).write_bytes(data)
    return pipeline, copy, exported, json.loads(files["config.json"])


def decoded(pipeline) -> tuple[list[dict], list[float]]:
    """Each sentence decoded TOKENS tokens (the runner's cases), and the server's flow of each in milliseconds."""
    from attention_lab.checks import check_source
    from transformer import DecodingSession
    from transformer.flow import flow

    cases, server_ms = [], []
    for i, text in enumerate(SENTENCES):
        ids = check_source(pipeline, text)[0]
        session = DecodingSession(pipeline.model, ids, max_new_tokens=TOKENS)
        session.run()
        tokens = [step.token for step in session.steps]
        began = time.perf_counter()
        flow(pipeline.model, ids, tokens)
        server_ms.append((time.perf_counter() - began) * 1000)
        cases.append({"ids": ids, "tokens": tokens, "ablated": [], "key": {"serial": i, "version": 0}})
    return cases, server_ms


def in_the_page(copy: Path, cases: list[dict], work: Path) -> list[float]:
    """The Flow tab's message made by the page's module for each case, in milliseconds (the runner's own timing)."""
    from attention_lab.messages import jsonable
    from attention_lab.page.frame import in_page
    from attention_lab.tabs import TABS

    request = work / "request.json"
    here = jsonable(in_page(TABS))
    request.write_text(json.dumps({"here": here, "cases": [{**c, "tabs": {"flow": {}}} for c in cases]}))
    done = subprocess.run(
        [shutil.which("node"), str(RUNNER), str(copy), str(request)], capture_output=True, text=True, check=False
    )
    if done.returncode != 0:
        raise SystemExit(done.stderr[-3000:])
    return [case["flow"] for case in json.loads(done.stderr.strip().splitlines()[-1])["took"]]


def report(config: dict, exported: float, cases: list[dict], page_ms: list[float], server_ms: list[float]) -> str:
    sizes = ", ".join(f"{len(c['ids'])}" for c in cases)
    said = (
        f"The Flow tab in the page for an opus-mt-de-en-shaped Marian (random weights), its {config['precision']['name']} "
        f"page copy (exported in {exported:.0f} s): 10-word sentences ({sizes} source tokens), each decoded "
        f"{TOKENS} tokens, every row computed; the page's module in Node (ONNX Runtime Web, one thread) against the "
        "server's flow (torch, one thread)."
    )
    lines = [
        said,
        "",
        "| sentence | in the page (s) | on the server (s) |",
        "|---|---:|---:|",
        *(
            f"| {t}{' (the first: its graph loaded)' if i == 0 else ''} | {p / 1000:.2f} | {s / 1000:.2f} |"
            for i, (t, p, s) in enumerate(zip(SENTENCES, page_ms, server_ms))
        ),
        f"| median | {statistics.median(page_ms) / 1000:.2f} | {statistics.median(server_ms) / 1000:.2f} |",
    ]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--precision", default="int8", help="the page copy's precision (int8, float16, float32)")
    parser.add_argument("--write", action="store_true", help="put the table into benchmarks/RESULTS.md")
    args = parser.parse_args()
    import torch

    torch.set_num_threads(1)
    work = Path(tempfile.mkdtemp(prefix="attention-explain-hub-"))
    try:
        pipeline, copy, exported, config = copied(work, args.precision)
        cases, server_ms = decoded(pipeline)
        page_ms = in_the_page(copy, cases, work)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    table = report(config, exported, cases, page_ms, server_ms)
    print(table)
    if args.write:
        put_block("explain-hub", table)


if __name__ == "__main__":
    main()
