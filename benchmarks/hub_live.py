"""transformers encoder–decoders decoding in the page (attention-lab export --live MODEL --precision P).

    python benchmarks/hub_live.py            # prints the tables
    python benchmarks/hub_live.py --write    # and puts them into benchmarks/RESULTS.md

1. Random models of real checkpoints' shapes (benchmarks/shaped_models.py, made here with save_pretrained): an
   opus-mt-de-en-shaped Marian (d_model 512, 6+6 layers, 8 heads, vocabulary 58,101) in each precision, and a
   t5-small- and a bart-base-shaped model in the default precision (page_copy's rule), each written as a live
   folder: its size and the export's time; served by `python -m http.server`, in Chromium, from opening it to the
   first drawn heatmap (the decoding the export embeds) and until the page has decoded on its own (the model loaded
   into the runtime); a Step (click to the page's last DOM change) alternated with the floor's one-plot redraw
   (benchmarks/floor_app.py); a Run of 15 tokens.
2. Python onnxruntime against transformers, float32, on a tiny random model of each family (shaped_models, d_model
   32, 2+2 layers, 4 heads, at a trained model's scale): the largest logit and attention-weight difference and the
   share of identical greedy tokens, on 50 sentences.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")
HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

from browser_page import CLICK, WATCH, click_ms, open_page, settle
from browser_speed import CHROMIUM_ARGS, STEP_TEXT
from load import start_app
from results import put_block
from shaped_models import FAMILIES, SHAPES, marian_shape, shaped, t5_shape
from static_host import served

RUN_TOKENS = 15
# (family, the checkpoint whose shape it has, its sizes, its vocabulary, the precisions written: None the default)
MODELS = [
    ("marian", "opus-mt-de-en", *SHAPES["opus"], ("int8", "float16", "float32")),
    ("t5", "t5-small", t5_shape(512, 6, 8, 2048), 32128, (None,)),
    ("bart", "bart-base", marian_shape(768, 6, 12, 3072), 50265, (None,)),
]
GOALS = {"int8_mb": 80, "ready_s": 10, "step": 0.4}
LIVE_CLICK = """id => {
  window.__lab.last = 0;
  window.__lab.t0 = performance.now();
  document.getElementById(id).click();
}"""
WORDS = (
    "Wo ist der Bahnhof ? Ich habe Hunger . Das Haus alt und klein Er liest ein Buch über Katzen Wir gehen morgen in "
    "die Stadt Kinder spielen im Garten Kannst du mir bitte helfen where is the station 12 2026 3,5 Straße ! ,"
)


def sentences(n: int, seed: int = 0) -> list[str]:
    rng = random.Random(seed)
    return [" ".join(rng.choices(WORDS.split(), k=rng.randint(1, 14))) for _ in range(n)]


def folder_mb(folder: Path, model_only: bool = False) -> float:
    """The folder's size, or (model_only) that of the model's own files: its graphs, weights, tokenizer and config
    (the rest is the runtime, plotly and the page, the same for every model)."""
    from attention_lab.page_copy.copies import FILES

    return sum(p.stat().st_size for p in folder.iterdir() if p.is_file() and (not model_only or p.name in FILES)) / 1e6


def opened(browser, url: str) -> tuple[object, float, float]:
    """The live page at `url`: the page, the seconds to its first drawn heatmap and to its own decoding."""
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    began = time.perf_counter()
    page.goto(url, wait_until="commit")
    page.wait_for_selector("[data-part=views] .js-plotly-plot .heatmaplayer", timeout=300_000)
    first = time.perf_counter() - began
    page.wait_for_function("document.body.dataset.busy === 'false' && !!window.attentionLabLive", timeout=600_000)
    ready = time.perf_counter() - began
    page.evaluate(WATCH)
    settle(page)
    return page, first, ready


def measure_browser(folders: dict[str, Path], floor_url: str, repeats: int) -> dict[str, dict]:
    from playwright.sync_api import sync_playwright

    out = {}
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
        floor = open_page(browser, floor_url)
        click_ms(floor, "Step", CLICK)  # loads plotly
        for precision, folder in folders.items():
            server, url = served(folder)
            url += "index.html"
            try:
                page, first, ready = opened(browser, url)
                page.fill("#lab-source", STEP_TEXT)
                settle(page)
                # a Run of RUN_TOKENS tokens: the random model rarely writes eos
                page.evaluate(
                    f"() => {{ window.attentionLabLive.ui.options = () => ({{topK: 5, maxNew: {RUN_TOKENS}}}); }}"
                )
                click_ms(page, "lab-reset", LIVE_CLICK)
                click_ms(page, "lab-step", LIVE_CLICK)  # the first step encodes the source
                floors, steps, runs = [], [], []
                for _ in range(repeats):
                    floors.append(click_ms(floor, "Step", CLICK))
                    steps.append(click_ms(page, "lab-step", LIVE_CLICK))
                    if page.evaluate("window.attentionLabLive.session.finished"):
                        click_ms(page, "lab-reset", LIVE_CLICK)
                for _ in range(max(3, repeats // 4)):
                    click_ms(page, "lab-reset", LIVE_CLICK)
                    runs.append(click_ms(page, "lab-run", LIVE_CLICK))
                written = page.evaluate("window.attentionLabLive.session.steps.length")
                out[precision] = {
                    "first": first,
                    "ready": ready,
                    "floor": statistics.median(floors),
                    "step": statistics.median(steps),
                    "run": statistics.median(runs),
                    "run_tokens": written,
                    "threads": page.evaluate("globalThis.crossOriginIsolated === true"),
                }
                page.context.close()
            finally:
                server.terminate()
                server.wait()
        browser.close()
    return out


def against_transformers(n: int = 50) -> list[tuple[str, float, float, float]]:
    """Per family: (family, largest logit difference, largest weight difference, share of identical tokens)."""
    import numpy as np
    import torch
    from transformers import AutoModelForSeq2SeqLM

    from attention_lab.checks import check_source
    from attention_lab.page_copy.copies import copy_files
    from attention_lab.page_copy.graph_decoding import GraphDecoder
    from transformer import load_pretrained

    rows = []
    for family in sorted(FAMILIES):
        shape = t5_shape(32, 2, 4, 64) if family == "t5" else marian_shape(32, 2, 4, 64)
        folder = shaped(family, Path(tempfile.mkdtemp(prefix=f"{family}-")), shape, 300, WORDS)
        pipeline = load_pretrained(str(folder))
        reference = AutoModelForSeq2SeqLM.from_pretrained(folder, attn_implementation="eager").eval()
        copy = Path(tempfile.mkdtemp(prefix=f"{family}-copy-"))
        for name, data in copy_files(pipeline, family, "float32").items():
            (copy / name).write_bytes(data)
        config = {**json.loads((copy / "config.json").read_text()), "max_new_tokens": 20}
        decoder = GraphDecoder(copy, config)
        logit, weight, same = 0.0, 0.0, 0
        for text in sentences(n, seed=3):
            ids = check_source(pipeline, text)[0]
            decoding = decoder.decode(ids)
            out = reference.generate(torch.tensor([ids]), num_beams=1, do_sample=False, max_new_tokens=20)
            tokens = out[0, 1:].tolist()
            eos = reference.generation_config.eos_token_id
            tokens = tokens[: tokens.index(eos) + 1] if eos in tokens else tokens
            same += decoding.tokens == tokens
            start = [config["bos_id"], *decoding.tokens[:-1]]
            with torch.no_grad():
                theirs = reference(
                    input_ids=torch.tensor([ids]), decoder_input_ids=torch.tensor([start]), output_attentions=True
                )
            for layer, w in enumerate(theirs.encoder_attentions):
                weight = max(weight, float(np.abs(decoding.encoder["encoder"][layer] - w[0].numpy()).max()))
            for t, step in enumerate(decoding.steps):
                for layer in range(config["n_decoder_layers"]):
                    own = theirs.decoder_attentions[layer][0, :, t, : t + 1].numpy()
                    cross = theirs.cross_attentions[layer][0, :, t].numpy()
                    weight = max(weight, float(np.abs(step.outputs["self"][layer] - own).max()))
                    weight = max(weight, float(np.abs(step.outputs["cross"][layer] - cross).max()))
                finite = np.isfinite(step.logits)
                if finite.sum() > 1:  # not a forced step
                    logit = max(logit, float(np.abs(step.logits[finite] - theirs.logits[0, t].numpy()[finite]).max()))
        rows.append((family, logit, weight, same / n))
    return rows


def report(written: dict, timing: dict, rows: list) -> str:
    """`written`: per label, (family, shape, precision, folder MB, model MB, export s, drift); `timing` per label."""
    lines = [
        (
            "Hub models in the page: random models of real checkpoints' shapes (benchmarks/shaped_models.py), "
            "`attention-lab export --live` as a folder, served by `python -m http.server` (no cross-origin "
            "isolation: one thread), in Chromium on this 2-core machine; Step = click to the page's last DOM change, "
            "median; floor = benchmarks/floor_app.py, clicked alternately."
        ),
        "",
        (
            "| family | shape of | precision | folder (MB) | model (MB) | export (s) | first heatmap (s) | decoding "
            "in the page after (s) | Step (ms) | Step / floor | Run of 15 tokens (ms) |"
        ),
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for label, (family, shape, precision, total, model, export_s, _) in written.items():
        t = timing.get(label)
        timed = (
            f"{t['first']:.1f} | {t['ready']:.1f} | {t['step']:.0f} | {t['step'] / t['floor']:.2f}× (floor "
            f"{t['floor']:.0f}) | {t['run']:.0f} ({t['run_tokens']} tokens)"
            if t
            else " | | | |"
        )
        lines.append(f"| {family} | {shape} | {precision} | {total:.1f} | {model:.1f} | {export_s:.0f} | {timed} |")
    lines += [
        "",
        "What each reduced copy changes against float32, measured by the export on its 50 sentences "
        "(page_copy/drift_sentences.txt): "
        + "; ".join(
            f"{label}: {d['identical']:.0%} identical greedy outputs, attention within {d['max_attention']:.2g}"
            for label, (*_, d) in written.items()
            if d.get("identical") is not None
        )
        + ".",
        "",
        (
            f"Goals: int8 ≤ {GOALS['int8_mb']} MB with the embeddings stored once; open to the page's own decoding ≤ "
            f"{GOALS['ready_s']} s; a Step ≤ {GOALS['step']}× the floor."
        ),
        "",
        (
            "Python onnxruntime against transformers (float32; tiny random models, d_model 32, 2+2 layers, 4 heads; "
            "50 sentences each, weights and logits teacher-forced on the page's tokens):"
        ),
        "",
        "| family | largest logit difference | largest attention-weight difference | identical greedy tokens |",
        "|---|---|---|---|",
        *(f"| {family} | {logit:.2g} | {weight:.2g} | {same:.0%} |" for family, logit, weight, same in rows),
    ]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=12, help="Steps measured per model")
    parser.add_argument("--write", action="store_true", help="put the tables into benchmarks/RESULTS.md")
    args = parser.parse_args()
    from attention_lab.export.live import write

    work = Path(tempfile.mkdtemp(prefix="attention-hub-live-"))
    text = " ".join([STEP_TEXT, *sentences(50)])
    folders, written = {}, {}
    for family, checkpoint, shape, vocab, precisions in MODELS:
        model = shaped(family, work / checkpoint, shape, vocab, text, max_length=32)
        for precision in precisions:
            label = f"{checkpoint} {precision or 'default'}"
            began = time.perf_counter()
            index = write(str(model), work / label.replace(" ", "-"), precision)
            took = time.perf_counter() - began
            chosen = json.loads((index.parent / "config.json").read_text(encoding="utf-8"))["precision"]
            folders[label] = index.parent
            written[label] = (
                family,
                checkpoint,
                chosen["name"] + (" (default)" if precision is None else ""),
                folder_mb(index.parent),
                folder_mb(index.parent, model_only=True),
                took,
                chosen,
            )
            print(label, written[label][2:6], flush=True)
    floor_server, floor_url = start_app(HERE / "floor_app.py")
    try:
        timing = measure_browser(folders, floor_url, args.repeats)
    finally:
        floor_server.terminate()
    rows = against_transformers()
    table = report(written, timing, rows)
    print(table)
    if args.write:
        put_block("hub-live", table)


if __name__ == "__main__":
    main()
