"""Random transformers models of real checkpoints' shapes, for the benchmarks: what a model of that size costs the
app, without downloading it (the machines here cannot reach the Hub).

A Marian model (the family of Helsinki-NLP/opus-mt-*) with the checkpoint's layers, heads and widths and a
vocabulary of its size, and a word-level tokenizer made with `tokenizers` whose words cover the benchmarks'
sentences (the rest of the vocabulary is never written by the tokenizer, but the output layer computes it).
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
    import torch
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors
    from transformers import MarianConfig, MarianMTModel, PreTrainedTokenizerFast

    words = sorted(set(re.findall(r"\w+|[^\w\s]", text)))
    vocab = {"</s>": 0, "<unk>": 1}
    for word in words:
        vocab.setdefault(f"▁{word}", len(vocab))
    for i in range(len(vocab), vocab_size - 1):
        vocab[f"▁unused{i}"] = i
    vocab["<pad>"] = pad = len(vocab)
    words_only = Tokenizer(models.WordLevel(vocab, unk_token="<unk>"))
    words_only.pre_tokenizer = pre_tokenizers.Sequence(
        [pre_tokenizers.Punctuation(), pre_tokenizers.Metaspace()]  # "Hunger." -> "▁Hunger", "▁."
    )
    words_only.decoder = decoders.Metaspace()
    words_only.post_processor = processors.TemplateProcessing(single="$A </s>", special_tokens=[("</s>", 0)])
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=words_only, eos_token="</s>", unk_token="<unk>", pad_token="<pad>"
    )
    config = MarianConfig(
        vocab_size=pad + 1,
        pad_token_id=pad,
        decoder_start_token_id=pad,
        eos_token_id=0,
        forced_eos_token_id=0,
        **shape,
    )
    torch.manual_seed(0)
    model = MarianMTModel(config).eval()
    model.generation_config.bad_words_ids = [[pad]]
    model.generation_config.forced_eos_token_id = 0
    folder.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder
