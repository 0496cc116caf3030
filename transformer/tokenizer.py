"""Tokenizers, saved as tokenizer.json inside each checkpoint: subword BPE for translation, characters for reversal.

Both are Hugging Face `tokenizers` objects with the special tokens <pad>=0, <s>=1 (bos), </s>=2 (eos), <unk>=3.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from tokenizers import Regex, decoders, models, normalizers, pre_tokenizers, trainers
from tokenizers import Tokenizer as HFTokenizer

SPECIAL_TOKENS = ["<pad>", "<s>", "</s>", "<unk>"]
PAD, BOS, EOS, UNK = SPECIAL_TOKENS
WORD_BOUNDARY = "\u2581"  # "▁", how Metaspace marks the start of a word


class Tokenizer:
    """Text <-> ids for one model. Sources end with eos; text made from ids (decode) drops special tokens.

    Examples:
        >>> tok = Tokenizer.characters("abc")
        >>> tok.encode("cab")
        [6, 4, 5, 2]
        >>> tok.decode([6, 4, 5])
        'cab'
    """

    def __init__(self, hf: HFTokenizer) -> None:
        for i, token in enumerate(SPECIAL_TOKENS):
            if hf.token_to_id(token) != i:
                raise ValueError(f"tokenizer must have {token} at id {i} (got {hf.token_to_id(token)})")
        self.hf = hf
        self.pad_id, self.bos_id, self.eos_id, self.unk_id = range(4)

    # Building --------------------------------------------------------------------------------------------------------

    @classmethod
    def characters(cls, alphabet: str) -> Tokenizer:
        """One token per character of `alphabet`; any other character becomes <unk>."""
        vocab = {token: i for i, token in enumerate(SPECIAL_TOKENS + sorted(set(alphabet)))}
        hf = HFTokenizer(models.WordLevel(vocab, unk_token=UNK))
        hf.pre_tokenizer = pre_tokenizers.Split(Regex("."), behavior="isolated")
        hf.decoder = decoders.Fuse()
        hf.add_special_tokens(SPECIAL_TOKENS)  # already in the vocabulary; this marks them special for decode
        return cls(hf)

    @classmethod
    def train_bpe(cls, texts: Iterable[str], vocab_size: int, min_frequency: int = 2) -> Tokenizer:
        """A byte-pair-encoding vocabulary learnt from `texts` (pass both languages for a joint vocabulary).

        Metaspace marks word starts with "▁", so text made from ids gets the spacing back exactly.
        """
        hf = HFTokenizer(models.BPE(unk_token=UNK))
        hf.normalizer = normalizers.NFC()
        # Split at spaces first (marking word starts), then split off punctuation so "hungry." is "▁hungry" ".".
        hf.pre_tokenizer = pre_tokenizers.Sequence(
            [
                pre_tokenizers.Metaspace(replacement=WORD_BOUNDARY, prepend_scheme="always"),
                pre_tokenizers.Punctuation(behavior="isolated"),
            ]
        )
        hf.decoder = decoders.Metaspace(replacement=WORD_BOUNDARY, prepend_scheme="always")
        trainer = trainers.BpeTrainer(
            vocab_size=vocab_size, min_frequency=min_frequency, special_tokens=SPECIAL_TOKENS, show_progress=False
        )
        hf.train_from_iterator(texts, trainer)
        return cls(hf)

    # Persistence -----------------------------------------------------------------------------------------------------

    def save(self, path: str | Path) -> None:
        self.hf.save(str(path))

    @classmethod
    def load(cls, path: str | Path) -> Tokenizer:
        return cls(HFTokenizer.from_file(str(path)))

    # Use -------------------------------------------------------------------------------------------------------------

    @property
    def vocab_size(self) -> int:
        return self.hf.get_vocab_size()

    @property
    def is_character_level(self) -> bool:
        """True for the reversal tokenizer (one token per character), False for subword BPE."""
        return isinstance(self.hf.model, models.WordLevel)

    def encode(self, text: str, add_eos: bool = True) -> list[int]:
        ids = self.hf.encode(text, add_special_tokens=False).ids
        return ids + [self.eos_id] if add_eos else ids

    def encode_target(self, text: str) -> list[int]:
        """bos + text + eos: slice [:-1] for the decoder input and [1:] for the labels."""
        return [self.bos_id, *self.encode(text)]

    def decode(self, ids: Iterable[int]) -> str:
        """Text for ids; special tokens (pad, bos, eos, unk) are dropped."""
        return self.hf.decode([i for i in ids if i >= len(SPECIAL_TOKENS)])

    def id_to_token(self, token_id: int) -> str:
        return self.hf.id_to_token(token_id) or UNK

    def token_to_id(self, token: str) -> int | None:
        return self.hf.token_to_id(token)

    def tokens(self, ids: Iterable[int]) -> list[str]:
        return [self.id_to_token(i) for i in ids]

    def get_vocab(self) -> dict[str, int]:
        return self.hf.get_vocab()

    def unknown_characters(self, text: str) -> list[str]:
        """Characters of `text` that come out as <unk>, in order of first appearance."""
        encoding = self.hf.encode(text, add_special_tokens=False)
        found: list[str] = []
        for token_id, (start, end) in zip(encoding.ids, encoding.offsets):
            if token_id == self.unk_id:
                for char in text[start:end]:
                    if char not in found and self._is_unknown(char):
                        found.append(char)
        return found

    def _is_unknown(self, char: str) -> bool:
        return self.unk_id in self.hf.encode(char, add_special_tokens=False).ids
