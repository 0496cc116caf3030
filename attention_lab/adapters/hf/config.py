"""A transformers model's facts in the terms of the library's contract: its shape, limits, special ids and the rules
its generate() decodes by."""

from __future__ import annotations

from dataclasses import dataclass

from transformers import GenerationConfig, PreTrainedModel

from transformer.config import MAX_POSITIONS
from transformer.contract import NextTokenRules


@dataclass(frozen=True)
class HFConfig:
    """transformer.contract.ModelConfig for a transformers encoder–decoder. bos_id is its decoder start token (pad
    for Marian and T5, eos for BART)."""

    model_type: str
    src_vocab_size: int
    tgt_vocab_size: int
    d_model: int
    n_heads: int
    n_encoder_layers: int
    n_decoder_layers: int
    max_len: int
    max_new_tokens: int
    pad_id: int
    bos_id: int
    eos_id: int


def rules_of(generation: GenerationConfig) -> NextTokenRules:
    """What transformers' generate() forces or forbids at a step, from the model's generation config: one-token
    bad_words_ids (never eos, as generate() leaves it), suppress_tokens, begin_suppress_tokens, a forced first and
    last token, and min_length / min_new_tokens (n new tokens is a decoder input of 1 + n: the start token counts)."""
    eos = generation.eos_token_id
    eos_ids = tuple(eos) if isinstance(eos, list) else (() if eos is None else (eos,))
    bad = [ids[0] for ids in generation.bad_words_ids or [] if len(ids) == 1 and ids[0] not in eos_ids]
    return NextTokenRules(
        banned=tuple(bad + list(generation.suppress_tokens or [])),
        begin_banned=tuple(generation.begin_suppress_tokens or []),
        forced_first=generation.forced_bos_token_id,
        forced_last=generation.forced_eos_token_id,
        eos_ids=eos_ids,
        min_length=max(generation.min_length or 0, 1 + (generation.min_new_tokens or 0)),
    )


def describe(hf: PreTrainedModel, heads: int, width: int, layers: tuple[int, int], rules: NextTokenRules) -> HFConfig:
    """The model's facts. max_new_tokens follows generate(): its max_length counts the decoder start token, so a
    decoding writes at most max_length - 1 tokens (max_length: the generation config's, else the positions)."""
    config = hf.config
    vocab = hf.get_output_embeddings().weight.size(0)
    positions = getattr(config, "max_position_embeddings", None) or getattr(config, "n_positions", None) or 512
    max_len = min(positions, MAX_POSITIONS)
    start = hf.generation_config.decoder_start_token_id
    if start is None:
        start = config.decoder_start_token_id
    eos = rules.eos_ids[0] if rules.eos_ids else config.eos_token_id
    pad = config.pad_token_id if config.pad_token_id is not None else start
    max_length = min(hf.generation_config.max_length or max_len, max_len)
    return HFConfig(
        model_type=config.model_type,
        src_vocab_size=vocab,
        tgt_vocab_size=vocab,
        d_model=width,
        n_heads=heads,
        n_encoder_layers=layers[0],
        n_decoder_layers=layers[1],
        max_len=max_len,
        max_new_tokens=max(1, max_length - 1),
        pad_id=pad,
        bos_id=start,
        eos_id=eos,
    )
