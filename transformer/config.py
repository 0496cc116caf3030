"""The model's hyper-parameters, saved next to the weights as config.json; and the facts every model's config offers
(ModelConfig, part of the model contract in transformer.contract), with the kinds of attention they count layers of."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

MAX_POSITIONS = 8192  # the positional-encoding table is built in full, so its size is capped

KINDS = ("encoder", "decoder_self", "cross")  # the three kinds of attention, in the order the model runs them


@runtime_checkable
class ModelConfig(Protocol):
    """The facts about a model that code driving it reads: its shape, its limits and its special ids."""

    @property
    def src_vocab_size(self) -> int:
        """Source token ids are 0..src_vocab_size - 1 (a pipeline checks its tokenizer against it)."""

    @property
    def tgt_vocab_size(self) -> int:
        """V: the width of the next-token logits."""

    @property
    def d_model(self) -> int:
        """D: the width of hidden states and token embeddings (attribution's inputs)."""

    @property
    def n_heads(self) -> int:
        """H: heads in every attention block (the views, ablation and editing name heads by it)."""

    @property
    def n_encoder_layers(self) -> int:
        """Layers of encoder self-attention (the views and ablation name them 1 to n)."""

    @property
    def n_decoder_layers(self) -> int:
        """Layers of decoder self- and cross-attention; the lens reads one hidden state per layer."""

    @property
    def max_len(self) -> int:
        """The most positions the source, and the decoder's input, may have (longer sources are cut to it)."""

    @property
    def max_new_tokens(self) -> int:
        """The most tokens one decoding writes, and what decoding takes when no limit is asked for."""

    @property
    def pad_id(self) -> int:
        """Padding in a batch of sources or targets: masked out as a key, never written."""

    @property
    def bos_id(self) -> int:
        """The token the decoder starts from (the first decoder input)."""

    @property
    def eos_id(self) -> int:
        """The token that ends a decoding."""


def n_layers(config: ModelConfig, kind: str) -> int:
    """How many layers of attention of `kind` (one of KINDS) the model has."""
    return config.n_encoder_layers if kind == "encoder" else config.n_decoder_layers


@dataclass
class TransformerConfig:
    """Shape of an encoder-decoder Transformer ("Attention Is All You Need", base model by default).

    Args:
        src_vocab_size: number of source token ids.
        tgt_vocab_size: number of target token ids.
        d_model: width of every hidden state and embedding.
        n_heads: attention heads per attention block; d_model must be divisible by it.
        n_encoder_layers: encoder layers (at least 1).
        n_decoder_layers: decoder layers (at least 1).
        d_ff: hidden width of the position-wise feed-forward block.
        dropout: dropout on embeddings, attention weights, and each sub-block's output (as in torch.nn.Transformer).
        max_len: longest source or target sequence, in tokens; sizes the positional-encoding table.
        pad_id: padding token id, shared by source and target; padding positions are never attended to.
        bos_id: target token that starts decoding.
        eos_id: target token that ends decoding.
        norm_first: False is post-LN (the paper, and torch's default); True is pre-LN, which trains more easily.
        tie_output_embeddings: the output projection reuses the target embedding matrix (Press & Wolf 2017).
        share_embeddings: source and target use one embedding matrix; needs a joint vocabulary.
    """

    src_vocab_size: int
    tgt_vocab_size: int
    d_model: int = 512
    n_heads: int = 8
    n_encoder_layers: int = 6
    n_decoder_layers: int = 6
    d_ff: int = 2048
    dropout: float = 0.1
    max_len: int = 256
    pad_id: int = 0
    bos_id: int = 1
    eos_id: int = 2
    norm_first: bool = False
    tie_output_embeddings: bool = True
    share_embeddings: bool = False

    def __post_init__(self) -> None:
        self._check_types()
        for name in (
            "src_vocab_size",
            "tgt_vocab_size",
            "d_model",
            "n_heads",
            "n_encoder_layers",
            "n_decoder_layers",
            "d_ff",
            "max_len",
        ):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be at least 1 (got {getattr(self, name)})")
        if self.max_len > MAX_POSITIONS:
            raise ValueError(f"max_len must be at most {MAX_POSITIONS} (got {self.max_len})")
        if self.d_model % self.n_heads:
            raise ValueError(
                f"d_model must be divisible by n_heads (got d_model={self.d_model}, n_heads={self.n_heads})"
            )
        if not 0.0 <= self.dropout < 1.0:
            raise ValueError(f"dropout must be in [0, 1) (got {self.dropout})")
        smallest_vocab = min(self.src_vocab_size, self.tgt_vocab_size)
        if not 0 <= self.pad_id < smallest_vocab:
            raise ValueError(
                f"pad_id must be a valid id in both vocabularies (got {self.pad_id}, vocab {smallest_vocab})"
            )
        for name in ("bos_id", "eos_id"):
            if not 0 <= getattr(self, name) < self.tgt_vocab_size:
                raise ValueError(
                    f"{name} must be a valid target id (got {getattr(self, name)}, tgt_vocab_size {self.tgt_vocab_size})"
                )
        if self.share_embeddings and self.src_vocab_size != self.tgt_vocab_size:
            raise ValueError(
                "share_embeddings needs equal vocabularies "
                f"(got src_vocab_size={self.src_vocab_size}, tgt_vocab_size={self.tgt_vocab_size})"
            )

    def _check_types(self) -> None:
        for field in dataclasses.fields(self):
            value = getattr(self, field.name)
            expected = {"int": int, "float": (int, float), "bool": bool}[field.type]
            # bool is a subclass of int; a config that says "n_heads": true is still wrong.
            wrong_bool = isinstance(value, bool) and field.type != "bool"
            if wrong_bool or not isinstance(value, expected):
                raise ValueError(f"{field.name} must be {field.type} (got {value!r})")

    @property
    def max_new_tokens(self) -> int:
        """The most tokens one decoding writes: the decoder's input is bos and every token but the last, so max_len
        positions allow max_len new tokens."""
        return self.max_len

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> TransformerConfig:
        """Build a config from parsed config.json, refusing unknown or missing keys rather than guessing."""
        if not isinstance(data, dict):
            # ValueError, as for every other bad config: callers catch one kind of error for config.json.
            raise ValueError(f"config must be a JSON object (got {type(data).__name__})")  # noqa: TRY004
        known = {field.name for field in dataclasses.fields(cls)}
        unknown = sorted(set(data) - known)
        if unknown:
            raise ValueError(f"unknown config keys: {', '.join(unknown)}")
        missing = sorted(
            f.name for f in dataclasses.fields(cls) if f.default is dataclasses.MISSING and f.name not in data
        )
        if missing:
            raise ValueError(f"missing config keys: {', '.join(missing)}")
        return cls(**data)
