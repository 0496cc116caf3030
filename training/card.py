"""Write a checkpoint's model card (README.md with Hub metadata) from freshly measured scores.

    python -m training.card --model checkpoints/de-en --minutes 476 --hardware "2-core CPU"
    python -m training.card --model checkpoints/reverse --minutes 22 --hardware "2-core CPU"

The scores in the card are measured here, on the checkpoint as it is, with the evaluation code of training.evaluate.
The prose lives in cards/*.md, with $-placeholders for what is measured.
"""

from __future__ import annotations

import argparse
import json
import string
import sys
from pathlib import Path

from huggingface_hub import ModelCard, ModelCardData

from transformer import CheckpointError, Seq2SeqPipeline, load_pretrained
from transformer.snapshots import list_snapshots

from .data import ding_split, libreoffice_pairs
from .evaluate import PER_LENGTH, REVERSAL_TEST_SEED, reversal_accuracy_by_length, score_translation, seen_and_unseen
from .presets import PRESETS
from .reversal import REVERSAL_MAX_CHARS, reversal_pairs

TEMPLATES = Path(__file__).resolve().parent / "cards"
EVERYDAY = ["Ich habe Hunger.", "Ich habe heute keine Zeit.", "Wo ist der Bahnhof?", "Das Wetter ist heute schön."]


def render(template: str, **values: object) -> str:
    """cards/<template> with every $-placeholder filled (a missing value is an error, not a blank)."""
    text = (TEMPLATES / template).read_text(encoding="utf-8")
    return string.Template(text).substitute({name: str(value) for name, value in values.items()})


def describe_model(pipeline: Seq2SeqPipeline) -> str:
    cfg = pipeline.model.config
    n_params = sum(p.numel() for p in pipeline.model.parameters())
    shared = " (shared source/target/output embeddings)" if cfg.share_embeddings else ""
    return (
        f"{n_params / 1e6:.2f}M parameters: d_model {cfg.d_model}, {cfg.n_heads} heads, "
        f"{cfg.n_encoder_layers}+{cfg.n_decoder_layers} layers, d_ff {cfg.d_ff}, "
        f"{'pre-LN' if cfg.norm_first else 'post-LN'}, vocabulary {cfg.tgt_vocab_size}{shared}, "
        f"max length {cfg.max_len}"
    )


def training_values(args: argparse.Namespace) -> dict[str, str]:
    history = f" {args.history}" if args.history else ""
    return {"command": args.command, "minutes": f"{args.minutes:.0f}", "hardware": args.hardware, "history": history}


def translation_card(pipeline: Seq2SeqPipeline, args: argparse.Namespace) -> str:
    splits = {name: ding_split(name) for name in ("train", "valid", "test")}
    test = splits["test"]
    greedy, beam = (score_translation(pipeline, test, strategy, 4) for strategy in ("greedy", "beam"))
    data = ModelCardData(
        language=["de", "en"],
        license="gpl-2.0",
        library_name="attention-lab",
        tags=["translation", "attention-visualization", "transformer", "from-scratch"],
        datasets=["ding-de-en", "libreoffice-help"],
        pipeline_tag="translation",
        metrics=["bleu", "chrf"],
        widget=[{"text": s} for s, _ in test if len(s) < 40][:6],
        trained_source_tokens=PRESETS["de-en"].max_len - 1,  # the batches' length limit counts eos
    )
    outputs = pipeline.generate(EVERYDAY, strategy="beam")
    preset = PRESETS["de-en"]
    return render(
        "translation.md",
        metadata=data.to_yaml(),
        model=describe_model(pipeline),
        greedy_bleu=f"{greedy.bleu.score:.1f}",
        greedy_chrf=f"{greedy.chrf.score:.1f}",
        beam_bleu=f"{beam.bleu.score:.1f}",
        beam_chrf=f"{beam.chrf.score:.1f}",
        bleu_signature=greedy.bleu_signature,
        chrf_signature=greedy.chrf_signature,
        everyday="\n".join(f"| {s} | {o} |" for s, o in zip(EVERYDAY, outputs)),
        test_sentences=len(test),
        n_pairs=f"{sum(len(pairs) for pairs in splits.values()):,}",
        **{f"n_{name}": f"{len(pairs):,}" for name, pairs in splits.items()},
        n_phrases=f"{len(ding_split('phrases')):,}",
        n_libreoffice=f"{len(libreoffice_pairs()):,}",
        phrases_per_epoch=f"{preset.phrases_per_epoch:,}",
        libreoffice_per_epoch=f"{preset.libreoffice_per_epoch:,}",
        focus_phrases_per_epoch=f"{preset.focus_phrases_per_epoch:,}",
        dropout=preset.dropout,
        word_dropout=preset.word_dropout,
        focus_dropout=preset.focus_dropout,
        focus_word_dropout=preset.focus_word_dropout,
        vocab_size=pipeline.tokenizer.vocab_size,
        max_len=pipeline.model.config.max_len,
        **training_values(args),
    )


def snapshots_section(folder: Path) -> str:
    """The card's table of the training snapshots beside the checkpoint (python -m training.train --snapshots N)."""
    try:
        found = list_snapshots(folder)
    except CheckpointError:
        return "No training snapshots ship with this checkpoint; `--snapshots 10` in the command above saves them."
    rows = [
        f"| {s.step:,} | `{s.folder.name if s.folder.name.startswith('step-') else '.'}` "
        f"| {_number(s.metrics.get('train_loss'))} | {_number(s.metrics.get('valid_loss'))} "
        f"| {_number(s.metrics.get('exact_match'), 100, '%')} |"
        for s in found
    ]
    return "\n".join(
        [
            (
                f"{len(found)} snapshots of the run, at roughly log-spaced steps, are in `training/` (float16 "
                "weights; the last is this checkpoint itself, `.`). The app's Training tab plays them."
            ),
            "",
            "| step | folder | training loss | validation loss | validation exact match |",
            "|---|---|---|---|---|",
            *rows,
        ]
    )


def _number(value: float | None, factor: float = 1, unit: str = "") -> str:
    return "–" if value is None else f"{factor * value:.{1 if unit else 3}f}{unit}"


def reversal_card(pipeline: Seq2SeqPipeline, args: argparse.Namespace, per_length: int = PER_LENGTH) -> str:
    accuracy = reversal_accuracy_by_length(pipeline, per_length=per_length)
    seen, unseen = seen_and_unseen(accuracy)
    data = ModelCardData(
        license="mit",
        library_name="attention-lab",
        tags=["sequence-reversal", "attention-visualization", "toy-task"],
        metrics=["exact_match"],
        widget=[{"text": s} for s, _ in reversal_pairs(5, 6, 20, seed=REVERSAL_TEST_SEED)],
        trained_source_tokens=REVERSAL_MAX_CHARS,
        gold_alignment="reversal",  # output i reads source n - i + 1: the app scores cross heads against it
    )
    return render(
        "reversal.md",
        metadata=data.to_yaml(),
        model=describe_model(pipeline),
        per_length=per_length,
        seen=f"{seen:.2f}",
        unseen=f"{unseen:.2f}",
        table="\n".join(f"| {n} | {100 * a:.1f}% |" for n, a in accuracy.items()),
        train_size=f"{PRESETS['reverse'].train_size:,}",
        snapshots=snapshots_section(args.model),
        **training_values(args),
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m training.card", description=__doc__.split("\n")[0])
    parser.add_argument("--model", type=Path, required=True)
    parser.add_argument("--minutes", type=float, required=True, help="training time")
    parser.add_argument("--hardware", required=True)
    parser.add_argument("--command", help="the exact training command (default: the task's preset command)")
    parser.add_argument("--history", default="", help="how the run actually went, if not in one piece")
    args = parser.parse_args(argv)
    pipeline = load_pretrained(args.model)
    reversal = pipeline.tokenizer.is_character_level
    args.command = args.command or f"python -m training.train --task {'reverse' if reversal else 'de-en'}"
    card = reversal_card(pipeline, args) if reversal else translation_card(pipeline, args)
    ModelCard(card).save(args.model / "README.md")
    print(json.dumps({"written": str(args.model / "README.md")}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
