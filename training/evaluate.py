"""Score a checkpoint.

    python -m training.evaluate --model checkpoints/de-en --split test [--beam 4]   # sacreBLEU BLEU and chrF
    python -m training.evaluate --model checkpoints/reverse                        # exact match by length
    python -m training.evaluate --model M --data FILE [--limit N]                  # a TSV of source, reference

Translation is scored with sacrebleu's defaults against the Ding split; reversal on fresh random strings of every
length from 1 to 32 (the model is trained on 1-24, so 25-32 measures generalisation). --model takes any model the app
reads: a checkpoint of ours, or a transformers encoder-decoder such as Helsinki-NLP/opus-mt-de-en (a folder or a Hub
repo id; the optional extra installed).
"""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import sacrebleu
from sacrebleu.metrics.base import Score

import attention_lab.adapters  # noqa: F401 - transformers encoder–decoders load through load_pretrained
from transformer import CheckpointError, Seq2SeqPipeline, load_pretrained
from transformer.checkpoint import error_line

from .data import ding_split, read_tsv
from .reversal import reversal_pairs

REVERSAL_TEST_SEED = 424_242  # distinct from every training and validation seed


@dataclass
class TranslationScores:
    hypotheses: list[str]
    bleu: Score  # str() reads "BLEU = 11.01 47.8/18.2/7.8/3.3 (BP = ...)"
    chrf: Score
    bleu_signature: str  # sacreBLEU's signature: how the score was computed
    chrf_signature: str


def score_translation(
    pipeline: Seq2SeqPipeline, pairs, strategy: str, beam_size: int, length_penalty: float = 1.0
) -> TranslationScores:
    sources, references = [s for s, _ in pairs], [[t for _, t in pairs]]
    hypotheses = pipeline.generate(sources, strategy=strategy, beam_size=beam_size, length_penalty=length_penalty)
    bleu, chrf = sacrebleu.BLEU(), sacrebleu.CHRF()
    return TranslationScores(
        hypotheses,
        bleu.corpus_score(hypotheses, references),
        chrf.corpus_score(hypotheses, references),
        str(bleu.get_signature()),
        str(chrf.get_signature()),
    )


PER_LENGTH = 200  # fresh reversal strings per length: the model card's figures are measured with as many


def reversal_accuracy_by_length(
    pipeline: Seq2SeqPipeline,
    per_length: int = PER_LENGTH,
    max_length: int = 32,
    strategy: str = "greedy",
    beam_size: int = 4,
) -> dict[int, float]:
    accuracy = {}
    for length in range(1, max_length + 1):
        pairs = reversal_pairs(per_length, length, length, seed=REVERSAL_TEST_SEED + length)
        outputs = pipeline.generate([s for s, _ in pairs], strategy=strategy, beam_size=beam_size)
        accuracy[length] = sum(o == t for o, (_, t) in zip(outputs, pairs)) / per_length
    return accuracy


def seen_and_unseen(accuracy: dict[int, float]) -> tuple[float, float]:
    """Mean exact match in percent over the trained lengths 1-24 and the unseen lengths 25-32."""
    seen = [accuracy[n] for n in range(1, 25)]
    unseen = [accuracy[n] for n in range(25, 33)]
    return 100 * sum(seen) / len(seen), 100 * sum(unseen) / len(unseen)


def is_reversal(pipeline: Seq2SeqPipeline) -> bool:
    return pipeline.tokenizer.is_character_level


def report_reversal(pipeline: Seq2SeqPipeline, args: argparse.Namespace, strategy: str) -> int:
    accuracy = reversal_accuracy_by_length(pipeline, args.per_length, strategy=strategy, beam_size=args.beam)
    print("| length | exact match |\n|---|---|")
    for length, value in accuracy.items():
        print(f"| {length} | {100 * value:.1f}% |")
    seen, unseen = seen_and_unseen(accuracy)
    print(f"exact match, lengths 1-24: {seen:.2f}%; lengths 25-32: {unseen:.2f}% ({strategy})")
    return 0


def report_translation(pipeline: Seq2SeqPipeline, args: argparse.Namespace, strategy: str) -> int:
    try:
        pairs = ding_split(args.split)
    except FileNotFoundError as err:
        print(err, file=sys.stderr)
        return 1
    pairs = pairs[: args.limit] if args.limit else pairs
    scores = score_translation(pipeline, pairs, strategy, args.beam, args.length_penalty)
    print(f"{scores.bleu}\n  signature: {scores.bleu_signature}")
    print(f"{scores.chrf}\n  signature: {scores.chrf_signature}")
    how = f" (beam {args.beam}, length penalty {args.length_penalty})" if strategy == "beam" else ""
    print(f"{len(pairs)} sentences of the Ding {args.split} split, {strategy}{how}")
    for (src, ref), hyp in list(zip(pairs, scores.hypotheses))[: args.show]:
        print(f"\n  de:  {src}\n  ref: {ref}\n  hyp: {hyp}")
    if args.output:
        args.output.write_text("\n".join(scores.hypotheses) + "\n", encoding="utf-8")
    return 0


def report_file(pipeline: Seq2SeqPipeline, args: argparse.Namespace, strategy: str) -> int:
    """The pairs of a TSV file (source, reference): exact match for reversal, else sacreBLEU's BLEU and chrF."""
    if not args.data.is_file():
        print(f"no such file: {args.data}", file=sys.stderr)
        return 1
    pairs = read_tsv(args.data)
    pairs = pairs[: args.limit] if args.limit else pairs
    if not pairs:
        print(f"{args.data} has no source<tab>reference pairs", file=sys.stderr)
        return 1
    if is_reversal(pipeline):
        outputs = pipeline.generate([s for s, _ in pairs], strategy=strategy, beam_size=args.beam)
        exact = 100 * sum(o == t for o, (_, t) in zip(outputs, pairs)) / len(pairs)
        print(f"exact match: {exact:.2f}% of {len(pairs)} pairs of {args.data} ({strategy})")
        return 0
    scores = score_translation(pipeline, pairs, strategy, args.beam, args.length_penalty)
    print(f"{scores.bleu}\n  signature: {scores.bleu_signature}")
    print(f"{scores.chrf}\n  signature: {scores.chrf_signature}")
    print(f"{len(pairs)} pairs of {args.data}, {strategy}")
    return 0


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m training.evaluate", description=__doc__.split("\n")[0])
    parser.add_argument("--model", required=True, help="checkpoint folder or Hub repo id")
    parser.add_argument("--data", type=Path, help="score this TSV of source<tab>reference pairs instead")
    parser.add_argument("--split", default="test", choices=["train", "valid", "test"], help="Ding split (translation)")
    parser.add_argument("--beam", type=int, default=0, help="beam size (0: greedy)")
    parser.add_argument("--length-penalty", type=float, default=1.0)
    parser.add_argument(
        "--per-length", type=int, default=PER_LENGTH, help="strings per length (reversal; the card's figures: 200)"
    )
    parser.add_argument("--limit", type=int, default=0, help="score only the first N sentences (a quick check)")
    parser.add_argument("--show", type=int, default=0, help="print this many examples")
    parser.add_argument("--output", type=Path, help="write the hypotheses here, one per line")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    strategy = "beam" if args.beam > 1 else "greedy"
    try:
        pipeline = load_pretrained(args.model)
    except CheckpointError as err:
        print(f"cannot load the model: {error_line(err)}", file=sys.stderr)
        return 1
    started = time.time()
    report = report_reversal if is_reversal(pipeline) else report_translation
    report = report_file if args.data else report
    if report(pipeline, args, strategy):
        return 1
    print(f"took {time.time() - started:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
