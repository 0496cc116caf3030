"""Write a checkpoint's model card (README.md with Hub metadata) from freshly measured scores.

    python -m transformer.card --model checkpoints/de-en --minutes 105 --hardware "2-core CPU"
    python -m transformer.card --model checkpoints/reverse --minutes 10 --hardware "2-core CPU"

The scores in the card are measured here, on the checkpoint as it is, with the evaluation code of transformer.evaluate.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from huggingface_hub import ModelCard, ModelCardData

from .data import ding_split, libreoffice_pairs, reversal_pairs
from .evaluate import REVERSAL_TEST_SEED, reversal_accuracy_by_length, score_translation
from .hub import Seq2SeqPipeline, load_pretrained
from .train import PRESETS

EVERYDAY = ["Ich habe Hunger.", "Ich habe heute keine Zeit.", "Wo ist der Bahnhof?", "Das Wetter ist heute schön."]


def describe_model(pipeline: Seq2SeqPipeline) -> str:
    cfg = pipeline.model.config
    n_params = sum(p.numel() for p in pipeline.model.parameters())
    return (
        f"{n_params / 1e6:.2f}M parameters: d_model {cfg.d_model}, {cfg.n_heads} heads, "
        f"{cfg.n_encoder_layers}+{cfg.n_decoder_layers} layers, d_ff {cfg.d_ff}, "
        f"{'pre-LN' if cfg.norm_first else 'post-LN'}, vocabulary {cfg.tgt_vocab_size}"
        f"{' (shared source/target/output embeddings)' if cfg.share_embeddings else ''}, max length {cfg.max_len}"
    )


def translation_card(folder: Path, pipeline: Seq2SeqPipeline, args) -> str:
    test = ding_split("test")
    lines, scores = [], {}
    for strategy, beam in (("greedy", 0), ("beam", 4)):
        _, bleu, bleu_metric, chrf, chrf_metric = score_translation(pipeline, test, strategy, beam, 1.0)
        label = "greedy" if strategy == "greedy" else "beam 4, length penalty 1.0"
        scores[strategy] = (bleu.score, chrf.score)
        lines.append(f"| {label} | {bleu.score:.1f} | {chrf.score:.1f} |")
        signatures = (str(bleu_metric.get_signature()), str(chrf_metric.get_signature()))
    examples = [s for s, _ in test if len(s) < 40][:6]
    data = ModelCardData(
        language=["de", "en"],
        license="gpl-2.0",
        library_name="attention-lab",
        tags=["translation", "attention-visualization", "transformer", "from-scratch"],
        datasets=["ding-de-en", "libreoffice-help"],
        pipeline_tag="translation",
        metrics=["bleu", "chrf"],
        widget=[{"text": t} for t in examples],
    )
    everyday = "\n".join(f"| {s} | {o} |" for s, o in zip(EVERYDAY, pipeline.generate(EVERYDAY, strategy="beam")))
    greedy_bleu, greedy_chrf = scores["greedy"]
    preset = PRESETS["de-en"]
    return f"""---
{data.to_yaml()}
---

# Attention Lab: German→English

A from-scratch encoder–decoder Transformer ({describe_model(pipeline)}) trained on the German–English example
sentences of the Ding dictionary. It is small and trained for a short time on a CPU, to be looked inside with the
Attention Lab app: every head's attention is meant to be inspected, not hidden.

## Scores on the Ding test split (1002 sentences)

| decoding | BLEU | chrF2 |
|---|---|---|
{chr(10).join(lines)}

sacreBLEU signatures: BLEU `{signatures[0]}`; chrF `{signatures[1]}`.

Everyday sentences (beam 4):

| German | output |
|---|---|
{everyday}

## Data

The example sentences of the Ding German–English dictionary (Frank Richter, TU Chemnitz), as packaged by Debian in
`trans-de-en` (`/usr/share/trans/de-en`), **licensed GPL-2.0-or-later**; this model is a derivative of it and is
distributed under the same terms. One pair per aligned ` | ` sub-entry, annotations stripped, the first `; `
alternative kept, sentence-like pairs only, de-duplicated on the German side: 19,259 pairs, split by a hash of the
German sentence into train 17,770 / valid 487 / test 1,002. From the same dictionary,
{preset.phrases_per_epoch:,} of its {len(ding_split("phrases")):,} word and phrase pairs (every non-sentence sub-entry,
placeholders such as jdn./sb. dropped) are sampled afresh into each epoch, for the vocabulary the sentences lack;
dictionary lines that hold a valid or test sentence are left out entirely.

For grammar the short Ding sentences lack, {preset.libreoffice_per_epoch:,} of {len(libreoffice_pairs()):,} sentence
pairs from LibreOffice's help pages (Debian's `libreoffice-help-de` and `libreoffice-help-en-us`, **MPL-2.0**) are
sampled into each epoch too: every page exists in both languages with the
same paragraph ids, so paragraphs pair up by id and split into sentences where both sides have as many. It is software
documentation, so it widens the model's German rather than matching the test's style; Ding valid and test sentences
are excluded from it.

Joint German–English BPE vocabulary of {pipeline.tokenizer.vocab_size} tokens, learned on the Ding training sentences
(Hugging Face `tokenizers`, `tokenizer.json` here).

## Training

```bash
{args.command}
```

{args.minutes:.0f} minutes on {args.hardware}.{(" " + args.history) if args.history else ""}

The recipe: AdamW (0.9, 0.98), linear warm-up then inverse square-root decay, then a linear cool-down to zero over
the last steps (`--anneal-steps`), label smoothing 0.1, dropout {preset.dropout}, source word dropout
{preset.word_dropout}, gradient clipping at 1.0, batches of about 1,500 tokens bucketed by length, pre-LN, shared
embeddings. An in-domain finish (`--focus-steps`): over the last steps each epoch is the Ding training sentences with
{preset.focus_phrases_per_epoch:,} phrase pairs and no help pages, trained with dropout {preset.focus_dropout} and
source word dropout {preset.focus_word_dropout}. Self-distillation (`--distill-steps`): over the last steps the Ding
training sentences' targets are the model's own beam-4 translations (of the 4 best, the one nearest the reference by
sentence BLEU), made when that window opens, so that greedy decoding learns to follow beam search. The best checkpoint
by validation BLEU (or the average of the last validated weights, when that scored better) is kept.

## Use

```python
from transformer import load_pretrained   # this repository's package
m = load_pretrained("checkpoints/de-en")   # or the Hub repo id this card lives in
m.generate(["Ich habe Hunger."], strategy="beam", beam_size=4)
```

## Limitations

- The Ding sentences are short and full of idioms; the test split is a hard yardstick and greedy BLEU {greedy_bleu:.1f}
  / chrF {greedy_chrf:.1f} is far from production translation. Long or technical sentences, names and rare words often
  come out wrong; outputs can repeat or drop content.
- German only in, English only out; at most {pipeline.model.config.max_len} tokens of source.
- Characters outside the training data (emoji, other scripts) are read as `<unk>`.
"""


def reversal_card(folder: Path, pipeline: Seq2SeqPipeline, args) -> str:
    accuracy = reversal_accuracy_by_length(pipeline, per_length=200)
    seen = 100 * sum(accuracy[n] for n in range(1, 25)) / 24
    unseen = 100 * sum(accuracy[n] for n in range(25, 33)) / 8
    table = "\n".join(f"| {n} | {100 * a:.1f}% |" for n, a in accuracy.items())
    examples = [s for s, _ in reversal_pairs(5, 6, 20, seed=REVERSAL_TEST_SEED)]
    data = ModelCardData(
        license="mit",
        library_name="attention-lab",
        tags=["sequence-reversal", "attention-visualization", "toy-task"],
        metrics=["exact_match"],
        widget=[{"text": t} for t in examples],
    )
    return f"""---
{data.to_yaml()}
---

# Attention Lab: sequence reversal

A from-scratch encoder–decoder Transformer ({describe_model(pipeline)}) that reverses strings of lowercase letters and
digits. Reversal makes attention easy to read: each output character should look at its mirror position in the source,
and the cross-attention heads show exactly that.

## Exact match (greedy), 200 fresh random strings per length

Trained on lengths 1–24: **{seen:.2f}%** exact on lengths 1–24; **{unseen:.2f}%** on the unseen lengths 25–32
(generalisation).

| length | exact match |
|---|---|
{table}

## Data and training

Synthetic and seeded: strings of a–z and 0–9 of length 1–24, a fresh sample of 50,000 each epoch; the target is the
reversed string, one token per character (`tokenizer.json` here, with pad/bos/eos/unk).

```bash
{args.command}
```

{args.minutes:.0f} minutes on {args.hardware}.

## Limitations

Only lowercase a–z and 0–9; any other character is refused by the app. Strings longer than 24 were never seen in
training, and accuracy falls off beyond that length (table above).
"""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m transformer.card", description=__doc__.split("\n")[0])
    parser.add_argument("--model", type=Path, required=True)
    parser.add_argument("--minutes", type=float, required=True, help="training time")
    parser.add_argument("--hardware", required=True)
    parser.add_argument("--command", help="the exact training command (default: the task's preset command)")
    parser.add_argument("--history", default="", help="how the run actually went, if not in one piece")
    args = parser.parse_args(argv)
    pipeline = load_pretrained(args.model)
    reversal = pipeline.tokenizer.is_character_level
    task = "reverse" if reversal else "de-en"
    args.command = args.command or f"python -m transformer.train --task {task}"
    card = reversal_card(args.model, pipeline, args) if reversal else translation_card(args.model, pipeline, args)
    ModelCard(card).save(args.model / "README.md")
    print(json.dumps({"written": str(args.model / "README.md")}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
