"""The page's graphs in float32, float16 and int8 (attention_lab/page_copy/precision.py): their size, and what each
precision changes.

    python -m training.data ding                  # writes data/de-en/test.tsv (the held-out Ding test split)
    python benchmarks/precision.py                # prints the tables
    python benchmarks/precision.py --write        # and puts them into benchmarks/RESULTS.md
    python benchmarks/precision.py --quick        # 20 sentences and a tiny Marian: shows that the code runs

Our de-en: per precision, the page copy's graphs and weights (encoder.onnx + decoder.onnx + weights.bin) in MB; the
held-out test split decoded greedily through the graphs with Python's onnxruntime (one thread): the share of
sentences written with float32's very tokens, sacreBLEU (its defaults, as training/evaluate.py) and its change, the
largest difference of any attention weight (encoder, decoder self, cross) on float32's tokens, and the time of a
sentence. Then a model of Helsinki-NLP/opus-mt-de-en's shape (Marian, d_model 512, 6+6 layers, 8 heads, feed-forward
2048, a 58,101-token vocabulary, tied embeddings; random weights, benchmarks/shaped_models.py): its size per
precision, and the time of one decoder step and of the encoder on a 25-token source.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
import warnings
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "benchmarks"))

import sacrebleu
from results import put_block
from shaped_models import SHAPES, marian_shape, shaped_marian

import attention_lab.adapters  # noqa: F401 - transformers encoder–decoders load through load_pretrained
from attention_lab.messages import jsonable
from attention_lab.page_copy.copies import page_config
from attention_lab.page_copy.graph_decoding import GraphDecoder
from attention_lab.page_copy.graphs import Exported, exported
from attention_lab.page_copy.precision import PRECISIONS, attention_difference, converted
from transformer import bundled, load_pretrained

TEST_SPLIT = REPO / "data" / "de-en" / "test.tsv"  # python -m training.data ding
TINY = (marian_shape(32, 2, 4, 64), 300)
FORCED = 16  # decoder steps timed per source: the same tokens in every precision (teacher forcing)


def size_mb(made: Exported) -> float:
    return (len(made.encoder) + len(made.decoder) + len(made.weights)) / 1e6


def read_split(path: Path, n: int | None) -> list[tuple[str, str]]:
    """The (German, English) pairs of a TSV split, its first n."""
    if not path.is_file():
        raise SystemExit(f"{path} is missing: python -m training.data ding writes it")
    lines = path.read_text(encoding="utf-8").splitlines()
    return [tuple(line.split("\t", 1)) for line in lines if "\t" in line][:n]


def ours(pairs: list[tuple[str, str]]) -> dict[str, dict]:
    """Per precision: size, identical share, BLEU, largest attention difference and ms a sentence, on `pairs`."""
    pipeline = load_pretrained(bundled("de-en"))
    made, config = exported(pipeline.model.eval()), jsonable(page_config(pipeline, "de-en"))
    sources = [pipeline.truncate(pipeline.tokenizer.encode(de)) for de, _ in pairs]
    eos, rows, reference = config["eos_id"], {}, []
    for precision in PRECISIONS:
        graphs = converted(made, precision)
        decoder = GraphDecoder(graphs, config)
        started = time.perf_counter()
        decodings = [decoder.decode(source) for source in sources]
        ms = 1000 * (time.perf_counter() - started) / len(sources)
        reference = reference or decodings
        texts = [pipeline.tokenizer.decode([t for t in d.tokens if t != eos]) for d in decodings]
        forced = [decoder.decode(s, force=r.tokens) for s, r in zip(sources, reference)]
        rows[precision] = {
            "size": size_mb(graphs),
            "identical": statistics.mean(d.tokens == r.tokens for d, r in zip(decodings, reference)),
            "bleu": sacrebleu.corpus_bleu(texts, [[en for _, en in pairs]]).score,
            "attention": max(attention_difference(r, f) for r, f in zip(reference, forced)),
            "ms": ms,
        }
    return rows


def marian(quick: bool, repeats: int) -> dict[str, dict]:
    """Per precision: the size of a Marian of opus-mt-de-en's shape, and the ms of a decoder step and the encoder."""
    shape, vocab = TINY if quick else SHAPES["opus"]
    text = "Ich habe den Verdacht , dass er lügt . Kannst du mir bitte das Salz geben ? Das Wetter ist heute schön ."
    with tempfile.TemporaryDirectory() as folder:
        pipeline = load_pretrained(shaped_marian(Path(folder) / "marian", shape, vocab, text))
        made, config = exported(pipeline.model.eval()), jsonable(page_config(pipeline, "marian"))
    source = pipeline.truncate(pipeline.tokenizer.encode(text))[:24] + [config["eos_id"]]
    rows = {}
    for precision in PRECISIONS:
        graphs = converted(made, precision)
        decoder = GraphDecoder(graphs, config)
        decoder.decode(source, force=[5] * 2)  # warm
        steps, encoders = [], []
        for _ in range(repeats):
            started = time.perf_counter()
            decoder.encode(source)
            encoders.append(time.perf_counter() - started)
            started = time.perf_counter()
            decoder.decode(source, force=[5] * FORCED)
            steps.append((time.perf_counter() - started - encoders[-1]) / FORCED)
        rows[precision] = {
            "size": size_mb(graphs),
            "weights": len(graphs.weights) / 1e6,
            "step": 1000 * statistics.median(steps),
            "encoder": 1000 * statistics.median(encoders),
        }
    return rows


def table(deen: dict[str, dict], opus: dict[str, dict], n: int, quick: bool) -> str:
    base = deen["float32"]
    lines = [
        f"## Precision of the page's graphs (benchmarks/precision.py{' --quick' if quick else ''})",
        "",
        (
            f"Our de-en on {n} sentences of the held-out Ding test split, greedy, Python onnxruntime, one thread. "
            "Identical: the share decoded to float32's tokens; attention: the largest |difference| of any attention "
            "weight on float32's tokens."
        ),
        "",
        "| precision | size (MB) | × float32 | identical | BLEU | ΔBLEU | attention | ms / sentence |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for precision, r in deen.items():
        lines.append(
            f"| {precision} | {r['size']:.2f} | {r['size'] / base['size']:.2f} | {r['identical']:.1%} | "
            f"{r['bleu']:.2f} | {r['bleu'] - base['bleu']:+.2f} | {r['attention']:.2g} | {r['ms']:.1f} |"
        )
    shape = "a tiny Marian" if quick else "opus-mt-de-en's shape (Marian 512, 6+6 layers, 8 heads, 58,101 tokens)"
    lines += [
        "",
        (
            f"{shape}, random weights: size, and the median time of a decoder step ({FORCED} forced steps) and of the "
            "encoder (25 source tokens), one thread."
        ),
        "",
        "| precision | size (MB) | weights.bin (MB) | × float32 | decoder step (ms) | encoder (ms) |",
        "|---|---|---|---|---|---|",
    ]
    for precision, r in opus.items():
        lines.append(
            f"| {precision} | {r['size']:.2f} | {r['weights']:.2f} | {r['size'] / opus['float32']['size']:.2f} | "
            f"{r['step']:.2f} | {r['encoder']:.1f} |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="20 sentences and a tiny Marian (a smoke run)")
    parser.add_argument("--write", action="store_true", help="put the tables into benchmarks/RESULTS.md")
    parser.add_argument("--split", type=Path, default=TEST_SPLIT, help="the Ding test split (training.data writes it)")
    args = parser.parse_args(argv)
    warnings.filterwarnings("ignore")
    pairs = read_split(args.split, 20 if args.quick else None)
    report = table(ours(pairs), marian(args.quick, 2 if args.quick else 7), len(pairs), args.quick)
    print(report)
    if args.write and not args.quick:
        put_block("precision", report)
    return 0


if __name__ == "__main__":
    sys.exit(main())
