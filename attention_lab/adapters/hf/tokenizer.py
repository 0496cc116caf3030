"""A transformers tokenizer as the library's contract (transformer.contract.Seq2SeqTokenizer) describes one."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from transformer.tokenizer import WORD_BOUNDARY


class TransformersTokenizer:
    """A transformers tokenizer meeting Seq2SeqTokenizer. Sources get the family's own special tokens (eos at
    the end; BART's <s>, NLLB's language code first); bos_id is the decoder's start token, as in the model's config."""

    is_character_level = False

    def __init__(self, hf, config) -> None:
        self.hf = hf
        self.pad_id, self.bos_id, self.eos_id = config.pad_id, config.bos_id, config.eos_id
        self.unk_id = hf.unk_token_id
        self.vocab_size = config.tgt_vocab_size  # the model's; tokenizers may have fewer ids (T5 pads its vocabulary)
        self._special = set(hf.all_special_ids)
        self._pieces: dict[int, str] = {}

    def encode(self, text: str, add_eos: bool = True) -> list[int]:
        return list(self.hf(text, add_special_tokens=add_eos)["input_ids"])

    def decode(self, ids: Iterable[int]) -> str:
        """Text for ids, detokenised by the family's tokenizer; special tokens are dropped."""
        return self.hf.decode([int(i) for i in ids], skip_special_tokens=True)

    def id_to_token(self, token_id: int) -> str:
        """The piece for display: a word's first piece starts with "▁" (sentencepiece's mark; byte-level BPE's "Ġ" is
        shown the same way), and bytes are shown as the text they decode to."""
        if token_id not in self._pieces:
            self._pieces[token_id] = self._piece(token_id)
        return self._pieces[token_id]

    def _piece(self, token_id: int) -> str:
        piece = self.hf.convert_ids_to_tokens(token_id)
        if piece is None:
            return self.hf.unk_token or f"<{token_id}>"
        if token_id in self._special or piece.startswith(WORD_BOUNDARY):
            return piece
        text = self.hf.decode([token_id], clean_up_tokenization_spaces=False)
        return WORD_BOUNDARY + text[1:] if text.startswith(" ") else text or piece

    def token_to_id(self, token: str) -> int | None:
        token_id = self.hf.convert_tokens_to_ids(token)
        return None if token_id is None or token_id == self.unk_id and token != self.hf.unk_token else token_id

    def tokens(self, ids: Iterable[int]) -> list[str]:
        return [self.id_to_token(int(i)) for i in ids]

    def unknown_characters(self, text: str) -> list[str]:
        """Characters of `text` that come out as the unknown token, in order of first appearance."""
        if self.unk_id is None:
            return []
        found: list[str] = []
        for char in dict.fromkeys(text):
            if not char.isspace() and self.unk_id in self.hf(char, add_special_tokens=False)["input_ids"]:
                found.append(char)
        return found

    def get_vocab(self) -> dict[str, int]:
        return self.hf.get_vocab()

    def save(self, path: str | Path) -> None:
        self.hf.save_pretrained(Path(path).parent)
