"""Tiny random transformers models of five families, saved with save_pretrained as a Hub repo holds them.

- Marian, with a sentencepiece model trained here on a few lines (source.spm, target.spm, vocab.json);
- BART, with a byte-level BPE trained here with `tokenizers`;
- T5, with a unigram model trained here with `tokenizers`;
- mBART, with MBartTokenizer (a fast tokenizer) converted by transformers from a sentencepiece model trained here;
- M2M100, with M2M100Tokenizer (sentencepiece model + vocab.json, language tokens after the vocabulary).

Each has the family's own decoder start token and generation rules (Marian: pad starts, pad banned, eos forced at the
limit; BART: eos starts, <s> forced first; T5: pad starts; mBART and M2M100: eos starts, the target language forced
first), so the tests see what real checkpoints do. FAMILIES holds the first three, PAGE_FAMILIES all five.
"""

from __future__ import annotations

import io
import json
from pathlib import Path

import torch

LINES = [
    "Wo ist der Bahnhof? Where is the station?",
    "Ich habe Hunger. I am hungry.",
    "Das Haus ist alt und klein. The house is old and small.",
    "Er liest ein Buch über Katzen. He reads a book about cats.",
    "Wir gehen morgen in die Stadt. We are going into town tomorrow.",
    "Die Kinder spielen im Garten. The children play in the garden.",
    "Kannst du mir bitte helfen? Can you help me, please?",
    "Heute ist das Wetter schön. The weather is nice today.",
] * 4
SMALL = {
    "d_model": 16,
    "encoder_layers": 2,
    "decoder_layers": 2,
    "encoder_attention_heads": 4,
    "decoder_attention_heads": 4,
    "encoder_ffn_dim": 32,
    "decoder_ffn_dim": 32,
    "max_position_embeddings": 64,
    "init_std": 0.3,  # larger than the default, so that the random models' outputs vary
}


def marian(folder: Path, shape: dict | None = None) -> Path:
    """A random Marian model and its tokenizer; `shape`: config sizes instead of SMALL's (layers, heads, ...)."""
    import sentencepiece as spm
    from transformers import MarianConfig, MarianMTModel, MarianTokenizer

    folder.mkdir(parents=True, exist_ok=True)
    model = _train_sentencepiece(90)
    (folder / "source.spm").write_bytes(model.getvalue())
    (folder / "target.spm").write_bytes(model.getvalue())
    processor = spm.SentencePieceProcessor(model_proto=model.getvalue())
    pieces = [processor.id_to_piece(i) for i in range(processor.get_piece_size())]
    vocab = {"</s>": 0, "<unk>": 1}
    for piece in pieces:
        vocab.setdefault(piece, len(vocab))
    vocab["<pad>"] = pad = len(vocab)
    (folder / "vocab.json").write_text(json.dumps(vocab))
    tokenizer = MarianTokenizer(str(folder / "source.spm"), str(folder / "target.spm"), str(folder / "vocab.json"))
    config = MarianConfig(
        vocab_size=pad + 1,
        pad_token_id=pad,
        decoder_start_token_id=pad,
        eos_token_id=0,
        forced_eos_token_id=0,
        **{**SMALL, **(shape or {})},
    )
    if shape is None:
        config.init_std = 1.0  # Marian's scaled embeddings need more to say different things for different sources
    torch.manual_seed(0)
    hf = MarianMTModel(config).eval()
    hf.generation_config.bad_words_ids = [[pad]]
    hf.generation_config.forced_eos_token_id = 0
    return _save(hf, tokenizer, folder)


def bart(folder: Path) -> Path:
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers
    from transformers import BartConfig, BartForConditionalGeneration, PreTrainedTokenizerFast

    specials = ["<s>", "<pad>", "</s>", "<unk>"]
    bpe = Tokenizer(models.BPE(unk_token="<unk>"))
    bpe.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    bpe.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=300,
        special_tokens=specials,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    bpe.train_from_iterator(LINES, trainer)
    bpe.post_processor = processors.RobertaProcessing(("</s>", 2), ("<s>", 0))
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=bpe, bos_token="<s>", pad_token="<pad>", eos_token="</s>", unk_token="<unk>"
    )
    config = BartConfig(
        vocab_size=bpe.get_vocab_size(),
        bos_token_id=0,
        pad_token_id=1,
        eos_token_id=2,
        decoder_start_token_id=2,
        forced_bos_token_id=0,
        forced_eos_token_id=2,
        **SMALL,
    )
    torch.manual_seed(0)
    hf = BartForConditionalGeneration(config).eval()
    hf.generation_config.forced_bos_token_id = 0
    hf.generation_config.forced_eos_token_id = 2
    return _save(hf, tokenizer, folder)


def t5(folder: Path) -> Path:
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors
    from transformers import PreTrainedTokenizerFast, T5Config, T5ForConditionalGeneration

    # The unigram model is learnt by sentencepiece on one thread (tokenizers' own trainer is not deterministic).
    pieces = _sentencepiece(100)
    vocab = [("<pad>", 0.0), ("</s>", 0.0), ("<unk>", 0.0)] + [
        p for p in pieces if p[0] not in ("<unk>", "<s>", "</s>")
    ]
    unigram = Tokenizer(models.Unigram(vocab, unk_id=2))
    unigram.pre_tokenizer = pre_tokenizers.Metaspace()
    unigram.decoder = decoders.Metaspace()
    unigram.post_processor = processors.TemplateProcessing(single="$A </s>", special_tokens=[("</s>", 1)])
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=unigram, pad_token="<pad>", eos_token="</s>", unk_token="<unk>"
    )
    config = T5Config(
        vocab_size=unigram.get_vocab_size() + 8,  # T5 pads its vocabulary beyond the tokenizer's, as t5-small does
        d_model=16,
        d_kv=4,
        d_ff=32,
        num_layers=2,
        num_decoder_layers=2,
        num_heads=4,
        relative_attention_num_buckets=8,
        relative_attention_max_distance=20,
        pad_token_id=0,
        eos_token_id=1,
        decoder_start_token_id=0,
        initializer_factor=2.0,  # varied outputs
    )
    torch.manual_seed(0)
    return _save(T5ForConditionalGeneration(config).eval(), tokenizer, folder)


def mbart(folder: Path) -> Path:
    """A random mBART model; sources read `tokens </s> en_XX`, and generation forces de_DE first as the target
    language, as mbart-large-50-many-to-many's does."""
    from transformers import MBartConfig, MBartForConditionalGeneration, MBartTokenizer

    folder.mkdir(parents=True, exist_ok=True)
    spm_file = folder / "sentencepiece.bpe.model"
    spm_file.write_bytes(_train_sentencepiece(90).getvalue())
    # the file alone: transformers converts it to a fast tokenizer (MBartConverter's layout: 4 specials, the pieces,
    # 25 language codes, <mask>), which save_pretrained writes as tokenizer.json
    tokenizer = MBartTokenizer.from_pretrained(folder, src_lang="en_XX", tgt_lang="de_DE")
    spm_file.unlink()
    target = tokenizer.convert_tokens_to_ids("de_DE")
    config = MBartConfig(
        vocab_size=len(tokenizer),
        bos_token_id=0,
        pad_token_id=1,
        eos_token_id=2,
        decoder_start_token_id=2,
        forced_bos_token_id=target,
        forced_eos_token_id=2,
        **SMALL,
    )
    torch.manual_seed(0)
    hf = MBartForConditionalGeneration(config).eval()
    hf.generation_config.forced_bos_token_id = target
    hf.generation_config.forced_eos_token_id = 2
    return _save(hf, tokenizer, folder)


def m2m100(folder: Path) -> Path:
    """A random M2M100 model; sources read `__en__ tokens </s>`, and __de__ is forced first as the target language.
    Its tokenizer is sentencepiece only (no tokenizer.json): vocab.json (fairseq's order) and the 100 language tokens
    after it; the model's vocabulary adds the 8 made-up words that m2m100_418M's has."""
    import sentencepiece as spm
    from transformers import M2M100Config, M2M100ForConditionalGeneration, M2M100Tokenizer

    folder.mkdir(parents=True, exist_ok=True)
    model = _train_sentencepiece(90)
    (folder / "sentencepiece.bpe.model").write_bytes(model.getvalue())
    processor = spm.SentencePieceProcessor(model_proto=model.getvalue())
    vocab = {"<s>": 0, "<pad>": 1, "</s>": 2, "<unk>": 3}
    for i in range(processor.get_piece_size()):
        vocab.setdefault(processor.id_to_piece(i), len(vocab))
    (folder / "vocab.json").write_text(json.dumps(vocab))
    tokenizer = M2M100Tokenizer(
        str(folder / "vocab.json"), str(folder / "sentencepiece.bpe.model"), src_lang="en", tgt_lang="de"
    )
    target = tokenizer.get_lang_id("de")
    config = M2M100Config(
        vocab_size=max(tokenizer.lang_token_to_id.values()) + 1 + tokenizer.num_madeup_words,
        bos_token_id=0,
        pad_token_id=1,
        eos_token_id=2,
        decoder_start_token_id=2,
        forced_bos_token_id=target,
        **SMALL,
    )
    config.init_std = 1.0  # scaled embeddings, as Marian's: more to say different things for different sources
    torch.manual_seed(0)
    hf = M2M100ForConditionalGeneration(config).eval()
    hf.generation_config.forced_bos_token_id = target
    return _save(hf, tokenizer, folder)


def _train_sentencepiece(vocab_size: int) -> io.BytesIO:
    import sentencepiece as spm

    model = io.BytesIO()
    spm.SentencePieceTrainer.train(
        sentence_iterator=iter(LINES),
        model_writer=model,
        vocab_size=vocab_size,
        model_type="unigram",
        num_threads=1,  # the same vocabulary every time
        minloglevel=2,
    )
    return model


def _sentencepiece(vocab_size: int) -> list[tuple[str, float]]:
    """(piece, log-probability) of a sentencepiece unigram model learnt on LINES."""
    import sentencepiece as spm

    processor = spm.SentencePieceProcessor(model_proto=_train_sentencepiece(vocab_size).getvalue())
    return [(processor.id_to_piece(i), processor.get_score(i)) for i in range(processor.get_piece_size())]


def _save(hf, tokenizer, folder: Path) -> Path:
    if hasattr(hf, "final_logits_bias"):  # zero at init; a real checkpoint's is not, and the output layer must add it
        hf.final_logits_bias.copy_(torch.randn(hf.final_logits_bias.shape, generator=torch.Generator().manual_seed(0)))
    hf.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


def generated(reference, ids: list[int], limit: int) -> list[int]:
    """transformers' greedy generate() of at most `limit` tokens under the model's generation config, without the
    decoder start token, stopped after eos as the library's decoding is: what each test holds ours to."""
    out = reference.generate(torch.tensor([ids]), num_beams=1, do_sample=False, max_new_tokens=limit)[0, 1:].tolist()
    eos = reference.generation_config.eos_token_id
    return out[: out.index(eos) + 1] if eos in out else out


FAMILIES = {"marian": marian, "bart": bart, "t5": t5}
PAGE_FAMILIES = {**FAMILIES, "mbart": mbart, "m2m100": m2m100}  # the page's tokenizers are tested on all five


def loaded(family: str, tmp_path_factory):
    """A tiny model of `family` made in a fresh temporary folder and loaded as a user loads it (load_pretrained)."""
    import attention_lab.adapters  # noqa: F401 - transformers encoder–decoders load through load_pretrained
    from transformer import load_pretrained

    return load_pretrained(str(FAMILIES[family](tmp_path_factory.mktemp(family))))
