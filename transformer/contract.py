"""What a sequence-to-sequence model and its tokenizer must offer to be decoded, drawn and tested here.

Decoding (greedy, beam search, the step-by-step session), Seq2SeqPipeline and the app's head tests are typed against
`Seq2SeqModel` and `Seq2SeqTokenizer`, never against one implementation, so a field means the same for every model.
Our `Transformer` and `Tokenizer` meet the contract natively; adapters for other model families (the app's
`attention_lab.adapters`) wrap them to meet it. Each member says why it exists: who calls it, or what it is for
(the token embeddings are there for gradient attribution). What happens inside encode and decode is read and
changed at named hook points (transformer.hooks), whose names every model shares.

Dimension key: B batch, H heads, S source positions, T target positions in this call, P cached target positions,
D model width, K head width (D // H), V target vocabulary.

Masks follow the package's one convention: a bool tensor, True where a query may attend to a key (see attention.py).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol, runtime_checkable

import torch

from .config import KINDS, ModelConfig, n_layers

__all__ = [
    "KINDS",
    "AttentionSublayer",
    "Cache",
    "DecoderOutput",
    "EncoderOutput",
    "ModelConfig",
    "NextTokenRules",
    "Seq2SeqModel",
    "Seq2SeqTokenizer",
    "n_layers",
]


@dataclass(frozen=True)
class NextTokenRules:
    """What a model may not write, or must write, at a decoding step; applied to its next-token logits.

    Our models never write pad or bos. Models of other libraries bring their generation settings (a token forced
    first, eos forced at the length limit, banned tokens, a minimum length), so that greedy decoding here gives the
    tokens their own generate() gives.
    """

    banned: tuple[int, ...] = ()  # never written
    begin_banned: tuple[int, ...] = ()  # not written at the first step
    forced_first: int | None = None  # the first step writes it
    forced_last: int | None = None  # the last step the limit allows writes it
    eos_ids: tuple[int, ...] = ()  # the tokens that end a decoding (held back while it is shorter than min_length)
    min_length: int = 0  # eos is not written while the decoder input (its start token included) is shorter

    def apply(self, logits: torch.Tensor, step: int | None = None, limit: int | None = None) -> torch.Tensor:
        """Next-token logits (..., V) with what may not be written at `step` (0-based) set to -inf, in place.

        step None: the positions along dim -2 are steps 0, 1, ... (a whole prefix at once). `limit` is the most steps
        the decoding may take (a forced last token needs it). Returns `logits`.
        """
        if step is None:  # the same rules, position by position, in a few writes
            return self._apply_to_prefix(logits, limit)
        if self.banned:
            logits[..., list(self.banned)] = -math.inf
        if step == 0 and self.begin_banned:
            logits[..., list(self.begin_banned)] = -math.inf
        if step + 1 < self.min_length and self.eos_ids:
            logits[..., list(self.eos_ids)] = -math.inf
        forced = self.forced_first if step == 0 else None
        if limit is not None and step == limit - 1 and self.forced_last is not None:
            forced = self.forced_last
        if forced is not None:
            logits[...] = -math.inf
            logits[..., forced] = 0.0
        return logits

    def _apply_to_prefix(self, logits: torch.Tensor, limit: int | None) -> torch.Tensor:
        # index_fill_ along the vocabulary: the same writes as indexing with a list, and a traced graph's too
        # (attention_lab.page_copy: the exporter cannot write through an ellipsis and a list)
        T = logits.size(-2)
        ids = lambda tokens: torch.tensor(list(tokens), device=logits.device)
        if self.banned:
            logits.index_fill_(-1, ids(self.banned), -math.inf)
        if T and self.begin_banned:
            logits[..., 0, :].index_fill_(-1, ids(self.begin_banned), -math.inf)
        if self.eos_ids and self.min_length > 1:
            logits[..., : self.min_length - 1, :].index_fill_(-1, ids(self.eos_ids), -math.inf)
        last = limit - 1 if limit is not None else None
        for position, forced in ((0, self.forced_first), (last, self.forced_last)):  # at the limit, the last wins
            if forced is not None and position is not None and 0 <= position < T:
                logits[..., position, :] = -math.inf
                logits[..., position, forced] = 0.0
        return logits


@runtime_checkable
class Cache(Protocol):
    """The decoder's keys and values for the positions decoded so far, so that a step costs one position.

    A decode given a cache returns a new one and leaves the one it was given as it was: a session can be forked and
    each fork stepped on its own (DecodingSession.fork), and Back keeps what it cut back to."""

    @property
    def length(self) -> int:
        """P: the target positions it covers (the next position decoded is P)."""

    def truncate(self, length: int) -> Cache:
        """A new cache as this one was after `length` positions, this one unchanged (Back, what-if)."""

    def select(self, index: torch.Tensor) -> Cache:
        """A new cache whose row i is row index[i] of this one, this one unchanged (beam search)."""


@dataclass
class EncoderOutput:
    memory: torch.Tensor  # (B, S, D): what cross-attention reads
    src_mask: torch.Tensor  # (B, 1, 1, S) bool, True at real source tokens
    attentions: tuple[torch.Tensor, ...]  # per encoder layer: (B, H, S, S), empty unless asked for
    values: tuple[torch.Tensor, ...] = ()  # per encoder layer: (B, H, S, K) projected values, with the attentions


@dataclass
class DecoderOutput:
    hidden: torch.Tensor  # (B, T, D): the decoder's output, after its final norm, before the output layer
    self_attentions: tuple[torch.Tensor, ...]  # per decoder layer: (B, H, T, P+T), empty unless asked for
    cross_attentions: tuple[torch.Tensor, ...]  # per decoder layer: (B, H, T, S), empty unless asked for
    cache: Cache | None  # covers every position so far, when a cache was given or asked for


@dataclass(frozen=True)
class AttentionSublayer:
    """What an attention sublayer adds to the residual stream beyond its hook points: its output projection, and
    the norm after the residual sum. The sublayer writes norm(residual + z W_o^T + b_o) (post-LN), or
    residual + z W_o^T + b_o when its norm comes first (pre-LN: `norm` is None)."""

    w_o: torch.Tensor  # (D, H * K): head h's output meets columns h*K..(h+1)*K-1
    b_o: torch.Tensor | None  # (D,), or None for a projection without bias
    norm: torch.nn.Module | None  # the LayerNorm after the residual sum (post-LN); None for pre-LN


@runtime_checkable
class Seq2SeqModel(Protocol):
    """An encoder–decoder that returns every head's attention and lets its heads be changed. It is a
    torch.nn.Module too: decoding reads its device from parameters() and switches it with eval() and train()."""

    config: ModelConfig
    special_ids: frozenset[int]  # ids that mark rather than mean (pad, start, eos, a language code; never the unknown
    # token, which stands for text): the views hide them on request and the head summary measures their weight
    rules: NextTokenRules  # what decoding may write at each step (see NextTokenRules)

    def encode(self, src: torch.Tensor, output_attentions: bool = False) -> EncoderOutput:
        """src (B, S) ids, padded with pad_id -> memory, the source mask, and per-layer weights and values if asked.

        Every decoding starts here. Its hook points (encoder.*, transformer.hooks) are where the head tests ablate,
        patching restores, attribution puts embeddings of its own and the contributions read each sublayer.
        """

    def decode(
        self,
        tgt: torch.Tensor,
        memory: torch.Tensor,
        src_mask: torch.Tensor,
        cache: Cache | None = None,
        use_cache: bool = False,
        output_attentions: bool = False,
    ) -> DecoderOutput:
        """The decoder over tgt (B, T): a whole prefix starting with bos_id, or with `cache` the positions after it.

        Self-attention is causal and hides target padding; cross-attention hides the source's (src_mask). Decoding
        steps with the cache; the head tests and the decoder's lens run whole prefixes. Its hook points (decoder.*)
        are called with start = the cache's length, so a hook tied to a position acts the same either way.
        """

    def sublayer(self, kind: str, layer: int) -> AttentionSublayer:
        """The output projection and post-norm of the attention of `kind` (one of KINDS) in `layer`: what source
        and target contributions (ALTI+) need beside the weights, values and residual streams read at hook points."""

    def project(self, hidden: torch.Tensor) -> torch.Tensor:
        """Hidden states (..., D) after the final norm -> next-token logits (..., V): the model's own output layer
        (with its bias and scaling, if it has them). Decoding calls it on DecoderOutput.hidden, the lens on
        final_norm of each layer's state."""

    def final_norm(self, states: torch.Tensor) -> torch.Tensor:
        """The decoder's final normalisation (the identity for a model without one): final_norm of the last layer's
        state is DecoderOutput.hidden. For a layer-by-layer lens: an earlier layer's state read through it and
        project, as the model reads its last."""

    def embed_source(self, src: torch.Tensor) -> torch.Tensor:
        """src (B, S) ids -> (B, S, D) token embeddings as the encoder reads them, before positions are added: what
        encoder.hook_embed sees, and what gradient attribution takes as the source's input."""

    def embed_target(self, tgt: torch.Tensor) -> torch.Tensor:
        """tgt (B, T) ids -> (B, T, D) token embeddings as the decoder reads them, before positions are added
        (what decoder.hook_embed sees)."""

    def encoder_value_norms(self, enc: EncoderOutput) -> list[torch.Tensor]:
        """Per encoder layer (B, H, S): ||v_j W_o^h|| for the values encode(output_attentions=True) recorded (the
        value-weighted reading)."""

    def save_pretrained(self, folder: str | Path) -> None:
        """Write the model's weights (safetensors) and config to a folder, as Seq2SeqPipeline.save_pretrained does."""

    def decoder_value_norms(
        self, cache: Cache, start: int = 0, cross: bool = True
    ) -> tuple[list[torch.Tensor], list[torch.Tensor]]:
        """Per decoder layer, ||v_j W_o^h|| of the cached self-attention values of keys start..P-1 (B, H, P - start),
        and if `cross`, of the cross-attention values (B, H, S); an empty list otherwise (the value-weighted reading,
        from the cache the steps used: a step needs only its new key's, and the cross-attention's never change)."""

    def parameters(self, recurse: bool = True) -> Iterator[torch.nn.Parameter]: ...

    def eval(self) -> Seq2SeqModel: ...

    def train(self, mode: bool = True) -> Seq2SeqModel: ...

    @property
    def training(self) -> bool: ...


@runtime_checkable
class Seq2SeqTokenizer(Protocol):
    """Text <-> ids for one model: sources end with eos; text made from ids (decode) drops special tokens."""

    pad_id: int
    bos_id: int  # the decoder's start token, as in the model's config
    eos_id: int
    unk_id: int | None  # what unknown text becomes (None: nothing is unknown, byte-level tokenizers)
    vocab_size: int  # equal to the model's vocabularies (a pipeline checks it)
    is_character_level: bool  # one token per character: the views show characters, not words

    def encode(self, text: str, add_eos: bool = True) -> list[int]:
        """A source's ids, eos last (add_eos), with any other markers the model family expects."""

    def decode(self, ids: Iterable[int]) -> str:
        """The text of ids, special tokens dropped (the output the page shows)."""

    def id_to_token(self, token_id: int) -> str:
        """The piece for display; a piece that starts a word starts with "▁" (the views merge pieces into words)."""

    def token_to_id(self, token: str) -> int | None:
        """The id of a piece, or None (a what-if names a token by its piece)."""

    def tokens(self, ids: Iterable[int]) -> list[str]:
        """id_to_token of each id (the views' labels)."""

    def unknown_characters(self, text: str) -> list[str]:
        """The characters of `text` that come out as the unknown token, in order (named in the input's message)."""

    def get_vocab(self) -> dict[str, int]:
        """Every piece and its id (the app names a character-level model's alphabet from it)."""

    def save(self, path: str | Path) -> None:
        """Write the tokenizer where a checkpoint keeps it."""
