"""Random transformers models of real checkpoints' shapes, for the benchmarks: what a model of that size costs the
app, without downloading it (the machines here cannot reach the Hub).

A model of one of the families the adapter reads (Marian, the family of Helsinki-NLP/opus-mt-*; BART, mBART,
M2M100, T5) with a checkpoint's layers, heads and widths and a vocabulary of its size, and a word-level tokenizer
made with `tokenizers` whose words cover the benchmarks' sentences and which marks a source as the family does
(the rest of the vocabulary is never written by the tokenizer, but the output layer computes it).
"""

from __future__ import annotations

import re
from pathlib import Path


def marian_shape(d_model: int, layers: int, heads: int, ffn: int) -> dict:
    """A Marian config's sizes (as many layers on each side), initialised at a trained model's scale."""
    sides = ("encoder", "decoder")
    return {
        "d_model": d_model,
        **{f"{side}_layers": layers for side in sides},
        **{f"{side}_attention_heads": heads for side in sides},
        **{f"{side}_ffn_dim": ffn for side in sides},
        "max_position_embeddings": 512,
        "init_std": 0.02,
    }


SHAPES = {  # a real checkpoint's sizes, and its vocabulary
    "opus": (marian_shape(512, 6, 8, 2048), 58101),  # Helsinki-NLP/opus-mt-de-en
    "large": (marian_shape(1024, 12, 16, 4096), 250027),  # facebook/mbart-large-cc25 (12+12 layers, 16 heads)
}


def shaped_marian(folder: Path, shape: dict, vocab_size: int, text: str) -> Path:
    """A random Marian model of `shape` with `vocab_size` tokens, saved in `folder` with a tokenizer that knows the
    words of `text`; returns the folder."""
    return shaped("marian", folder, shape, vocab_size, text)


# Per family: (its config class, the special tokens first in its vocabulary, what a source looks like, the ids of
# pad, eos and the decoder's start, and the token its generate() forces first). A language code is a word of the
# vocabulary (mBART's en_XX, M2M100's __en__); the target language's code is forced first, as translation asks.
FAMILIES = {
    "marian": ("MarianConfig", ["</s>", "<unk>"], "$A </s>", ("<pad>", "</s>", "<pad>"), None),
    "bart": ("BartConfig", ["<s>", "<pad>", "</s>", "<unk>"], "<s> $A </s>", ("<pad>", "</s>", "</s>"), "<s>"),
    "mbart": (
        "MBartConfig",
        ["<s>", "<pad>", "</s>", "<unk>", "en_XX", "de_DE"],
        "$A </s> de_DE",
        ("<pad>", "</s>", "</s>"),
        "en_XX",
    ),
    "m2m100": (
        "M2M100Config",
        ["<s>", "<pad>", "</s>", "<unk>", "__en__", "__de__"],
        "__de__ $A </s>",
        ("<pad>", "</s>", "</s>"),
        "__en__",
    ),
    "t5": ("T5Config", ["<pad>", "</s>", "<unk>"], "$A </s>", ("<pad>", "</s>", "<pad>"), None),
}


def t5_shape(d_model: int, layers: int, heads: int, ffn: int) -> dict:
    """A T5 config's sizes (as many layers on each side), initialised at a trained model's scale."""
    return {
        "d_model": d_model,
        "d_kv": d_model // heads,
        "d_ff": ffn,
        "num_layers": layers,
        "num_decoder_layers": layers,
        "num_heads": heads,
        "initializer_factor": 1.0,
    }


def shaped(family: str, folder: Path, shape: dict, vocab_size: int, text: str, max_length: int | None = None) -> Path:
    """A random model of `family` (FAMILIES) of `shape` (its config's sizes: marian_shape's keys, or t5_shape's for
    T5) with `vocab_size` tokens, saved in `folder` with a word-level tokenizer that knows the words of `text` and
    marks a source as the family does, and `max_length` in its generation config if given; returns the folder."""
    import torch
    import transformers
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors
    from transformers import AutoModelForSeq2SeqLM, PreTrainedTokenizerFast

    config_class, specials, template, (pad, eos, start), first = FAMILIES[family]
    words = sorted(set(re.findall(r"\w+|[^\w\s]", text)))
    vocab = {token: i for i, token in enumerate(specials)}
    for word in words:
        vocab.setdefault(f"▁{word}", len(vocab))
    for i in range(len(vocab), vocab_size - (1 if "<pad>" not in vocab else 0)):
        vocab[f"▁unused{i}"] = i
    vocab.setdefault("<pad>", len(vocab))
    words_only = Tokenizer(models.WordLevel(vocab, unk_token="<unk>"))
    words_only.pre_tokenizer = pre_tokenizers.Sequence(
        [pre_tokenizers.Punctuation(), pre_tokenizers.Metaspace()]  # "Hunger." -> "▁Hunger", "▁."
    )
    words_only.decoder = decoders.Metaspace()
    marks = [t for t in template.split() if t != "$A"]
    words_only.post_processor = processors.TemplateProcessing(
        single=template, special_tokens=[(t, vocab[t]) for t in marks]
    )
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=words_only,
        eos_token="</s>",
        unk_token="<unk>",
        pad_token="<pad>",
        additional_special_tokens=[t for t in specials if t not in ("<s>", "<pad>", "</s>", "<unk>")] or None,
    )
    ids = {"pad_token_id": vocab[pad], "eos_token_id": vocab[eos], "decoder_start_token_id": vocab[start]}
    if family != "t5":
        ids["forced_eos_token_id"] = vocab[eos]
    config = getattr(transformers, config_class)(vocab_size=len(vocab), **ids, **shape)
    torch.manual_seed(0)
    model = AutoModelForSeq2SeqLM.from_config(config).eval()
    if family != "t5":
        model.generation_config.bad_words_ids = [[vocab[pad]]]
        model.generation_config.forced_eos_token_id = vocab[eos]
    if first is not None:
        model.generation_config.forced_bos_token_id = vocab[first]
    if max_length is not None:  # random weights rarely write eos: a benchmark may stop them where a trained one would
        model.generation_config.max_length = max_length
    folder.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder
