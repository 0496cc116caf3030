"""A transformers encoder–decoder (Marian/opus-mt, BART, mBART, M2M100/NLLB, T5) behind the interface our decoding drives.

HFSeq2Seq offers what DecodingSession, greedy_decode, beam_search and the lens call on a Transformer: `config`,
`encode`, `decode` (with a cache that covers the positions so far and can be truncated and reordered), `project`,
`constrain`, and the value norms. The forward pass is transformers' own, with its eager attention: one attention
function registered with transformers' AttentionInterface runs each family's eager attention, records the values,
and applies Interventions (ablated heads, edited cross-attention weights) exactly as our own attention does. Nothing
of the app is written twice for these models.

This module needs the optional extra (`pip install -r requirements-hf.txt`); transformer.hf_load imports it.
"""

from __future__ import annotations

import contextlib
import contextvars
import copy
import math
import sys
from collections.abc import Iterable
from dataclasses import dataclass, field

import torch
from torch import nn
from transformers import AttentionInterface, GenerationConfig, PreTrainedModel
from transformers.masking_utils import AttentionMaskInterface, eager_mask
from transformers.modeling_outputs import BaseModelOutput

from .attention import HeadControl, edit_weights, keep_heads, value_norms
from .checkpoint import CheckpointError
from .config import MAX_POSITIONS, TransformerConfig
from .interventions import Interventions
from .model import DecoderOutput, EncoderOutput

ATTENTION = "attention_lab"  # the attn_implementation these models are loaded with


@dataclass
class _Call:
    """One encode or decode call's instructions to the attention function: controls and recorded values by module."""

    controls: dict[int, HeadControl] = field(default_factory=dict)
    values: dict[int, torch.Tensor] | None = None  # filled when the call records values
    seen: set[int] = field(default_factory=set)  # the modules whose attention ran through _attention


_current: contextvars.ContextVar[_Call | None] = contextvars.ContextVar("attention_lab_call", default=None)


def _attention(module: nn.Module, query, key, value, attention_mask, **kwargs):
    """The family's own eager attention, then what the current call asks for; outside a call, eager unchanged."""
    eager = sys.modules[type(module).__module__].eager_attention_forward
    output, weights = eager(module, query, key, value, attention_mask, **kwargs)  # (B, T, H, K), (B, H, T, S)
    call = _current.get()
    if call is None:
        return output, weights
    call.seen.add(id(module))
    if call.values is not None:
        call.values[id(module)] = value
    control = call.controls.get(id(module))
    if control is None:
        return output, weights
    weights = edit_weights(weights, control)
    heads = weights.to(value) @ value if control.weights is not None else output.transpose(1, 2)  # (B, H, T, K)
    return keep_heads(heads, control).transpose(1, 2).contiguous(), weights


AttentionInterface.register(ATTENTION, _attention)
# transformers builds no attention mask for an implementation it does not know: ours takes eager's (causal, padding).
AttentionMaskInterface.register(ATTENTION, eager_mask)


@contextlib.contextmanager
def _calling(call: _Call):
    token = _current.set(call)
    try:
        yield
    finally:
        _current.reset(token)


def attention_modules(hf: PreTrainedModel) -> dict[str, list[nn.Module]]:
    """The attention modules by kind ("encoder", "decoder_self", "cross"), one per layer, in the T5 or the BART
    layout (Marian, mBART and M2M100/NLLB are laid out as BART is); CheckpointError for any other layout."""
    encoder, decoder = hf.get_encoder(), hf.get_decoder()
    if hasattr(encoder, "block"):  # T5, mT5
        return {
            "encoder": [block.layer[0].SelfAttention for block in encoder.block],
            "decoder_self": [block.layer[0].SelfAttention for block in decoder.block],
            "cross": [block.layer[1].EncDecAttention for block in decoder.block],
        }
    try:
        return {
            "encoder": [layer.self_attn for layer in encoder.layers],
            "decoder_self": [layer.self_attn for layer in decoder.layers],
            "cross": [layer.encoder_attn for layer in decoder.layers],
        }
    except AttributeError as err:
        raise CheckpointError(
            f"{hf.config.model_type}: its attention is laid out in a way Attention Lab does not know yet "
            "(it reads BART-like and T5-like encoder–decoders)"
        ) from err


def output_weight(module: nn.Module) -> torch.Tensor:
    """W_o (D, H * K) of an attention module: BART's out_proj or T5's o."""
    return (module.out_proj if hasattr(module, "out_proj") else module.o).weight


def n_heads(module: nn.Module) -> int:
    return module.num_heads if hasattr(module, "num_heads") else module.n_heads


@dataclass(frozen=True)
class Rules:
    """What transformers' generate() forces or forbids at a step, read from the model's generation config."""

    banned: tuple[int, ...] = ()  # never written: one-token bad_words_ids, suppress_tokens
    begin_banned: tuple[int, ...] = ()  # not written at the first step: begin_suppress_tokens
    forced_first: int | None = None  # forced_bos_token_id: the first step writes it
    forced_last: int | None = None  # forced_eos_token_id: the last step the limit allows writes it
    eos_ids: tuple[int, ...] = ()
    min_length: int = 0  # eos is not written while the decoder input (start token included) is shorter
    # (min_new_tokens n is min_length 1 + n: the start token is the decoder's only input before the first new token)

    @classmethod
    def of(cls, generation: GenerationConfig) -> Rules:
        eos = generation.eos_token_id
        eos_ids = tuple(eos) if isinstance(eos, list) else (() if eos is None else (eos,))
        bad = [ids[0] for ids in generation.bad_words_ids or [] if len(ids) == 1 and ids[0] not in eos_ids]
        return cls(
            banned=tuple(bad + list(generation.suppress_tokens or [])),
            begin_banned=tuple(generation.begin_suppress_tokens or []),
            forced_first=generation.forced_bos_token_id,
            forced_last=generation.forced_eos_token_id,
            eos_ids=eos_ids,
            min_length=max(generation.min_length or 0, 1 + (generation.min_new_tokens or 0)),
        )

    def apply(self, logits: torch.Tensor, step: int, limit: int | None) -> None:
        """Set, in place, what may not be written at `step` (0-based) of a decoding of at most `limit` steps to -inf."""
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


class HFCache:
    """transformers' EncoderDecoderCache, used as our KVCache is: truncate and select return new caches and leave
    this one as it was (layers are copied shallowly, since transformers' own update replaces tensors, never edits them)."""

    def __init__(self, inner) -> None:
        self.inner = inner

    @property
    def length(self) -> int:
        return self.inner.get_seq_length()

    def copy(self):
        """A cache transformers may extend without changing this one."""
        new = copy.copy(self.inner)
        for name in ("self_attention_cache", "cross_attention_cache"):
            part = copy.copy(getattr(self.inner, name))
            part.layers = [copy.copy(layer) for layer in part.layers]
            setattr(new, name, part)
        new.is_updated = dict(self.inner.is_updated)
        return new

    def truncate(self, length: int) -> HFCache:
        """The cache as it was after `length` positions (for stepping back)."""
        new = self.copy()
        for layer in new.self_attention_cache.layers:
            layer.keys, layer.values = layer.keys[:, :, :length], layer.values[:, :, :length]
        return HFCache(new)

    def select(self, index: torch.Tensor) -> HFCache:
        """Reorder or repeat batch rows (beam search): row i of the result is row index[i] of this cache."""
        new = self.copy()
        for layer in [*new.self_attention_cache.layers, *new.cross_attention_cache.layers]:
            layer.keys, layer.values = layer.keys.index_select(0, index), layer.values.index_select(0, index)
        return HFCache(new)

    def values(self) -> tuple[list[torch.Tensor], list[torch.Tensor]]:
        """Per decoder layer, the cached self-attention (B, H, P, K) and cross-attention (B, H, S, K) values."""
        own = [layer.values for layer in self.inner.self_attention_cache.layers]
        return own, [layer.values for layer in self.inner.cross_attention_cache.layers]


class HFSeq2Seq(nn.Module):
    """A transformers AutoModelForSeq2SeqLM, loaded with attn_implementation=ATTENTION, as our decoding sees a model.

    `config` describes it in our terms: bos_id is the decoder's start token (pad for Marian and T5, eos for BART),
    max_len the positions it can read. `decode` returns logits as its hidden states (the family's own head, bias
    and scaling included), so `project` is the identity; `constrain` applies what generate() would force or forbid.
    """

    def __init__(self, hf: PreTrainedModel, name: str = "model", special_ids: Iterable[int] = ()) -> None:
        super().__init__()
        if hf.config._attn_implementation != ATTENTION:  # weights and values are read through our attention function
            hf.set_attn_implementation(ATTENTION)
        self.hf = hf
        self.eval()  # as loaded models are: Seq2SeqPipeline.generate puts back the mode it found
        self.modules_by_kind = attention_modules(hf)
        first = self.modules_by_kind["encoder"][0]
        heads = {n_heads(m) for ms in self.modules_by_kind.values() for m in ms}
        if len(heads) != 1:
            raise CheckpointError(f"{name}: layers with different numbers of heads ({sorted(heads)}) are not supported")
        self.rules = Rules.of(hf.generation_config)
        layers = (len(self.modules_by_kind["encoder"]), len(self.modules_by_kind["cross"]))
        self.config = describe(hf, heads.pop(), output_weight(first).size(1), layers, self.rules)
        # markers that are not text: pad, start, eos, and the tokenizer's own (BART's <s>, language codes)
        self.special_ids = frozenset({self.config.pad_id, self.config.bos_id, self.config.eos_id, *special_ids})
        self._check_attention_runs_here(name)

    @torch.no_grad()
    def _check_attention_runs_here(self, name: str) -> None:
        """Decode one step of a two-token source: every attention module must run through _attention (a family
        that computes attention its own way would be drawn from nothing and ignore ablations)."""
        call, device = _Call(), next(self.parameters()).device
        src = torch.full((1, 2), self.config.eos_id, device=device)
        with _calling(call):
            memory = self.hf.get_encoder()(input_ids=src).last_hidden_state
            start = torch.full((1, 1), self.config.bos_id, device=device)
            self.hf(encoder_outputs=BaseModelOutput(last_hidden_state=memory), decoder_input_ids=start)
        missed = [m for ms in self.modules_by_kind.values() for m in ms if id(m) not in call.seen]
        if missed:
            raise CheckpointError(
                f"{name}: {self.hf.config.model_type} computes attention outside transformers' attention interface "
                f"({type(missed[0]).__name__}), so Attention Lab cannot read or change its heads"
            )

    def _controls(self, kind: str, controls: list[HeadControl | None]) -> dict[int, HeadControl]:
        return {id(m): c for m, c in zip(self.modules_by_kind[kind], controls) if c is not None}

    def encode(
        self, src: torch.Tensor, output_attentions: bool = False, interventions: Interventions | None = None
    ) -> EncoderOutput:
        """src (B, S) -> memory (B, S, D), the source's attention mask (B, S), and per-layer weights and values."""
        mask = (src != self.config.pad_id).long()
        controls = interventions.encoder_controls(self.config) if interventions else None
        call = _Call(self._controls("encoder", controls or []), {} if output_attentions else None)
        with _calling(call):
            out = self.hf.get_encoder()(input_ids=src, attention_mask=mask, output_attentions=output_attentions)
        if not output_attentions:
            return EncoderOutput(out.last_hidden_state, mask, ())
        values = tuple(call.values[id(m)] for m in self.modules_by_kind["encoder"])
        return EncoderOutput(out.last_hidden_state, mask, tuple(out.attentions), values)

    def decode(
        self,
        tgt: torch.Tensor,
        memory: torch.Tensor,
        src_mask: torch.Tensor,
        cache: HFCache | None = None,
        use_cache: bool = False,
        output_attentions: bool = False,
        interventions: Interventions | None = None,
    ) -> DecoderOutput:
        """The decoder over tgt (B, T), after the cached positions if any; hidden is the logits (B, T, V)."""
        start = cache.length if cache is not None else 0
        call = _Call()
        if interventions:
            own, cross = zip(*interventions.decoder_controls(self.config, start, tgt.size(1), memory.size(1)))
            call.controls = {**self._controls("decoder_self", own), **self._controls("cross", cross)}
        caching = use_cache or cache is not None
        with _calling(call):
            out = self.hf(
                encoder_outputs=BaseModelOutput(last_hidden_state=memory),
                attention_mask=src_mask,
                decoder_input_ids=tgt,
                past_key_values=cache.copy() if cache is not None else None,
                use_cache=caching,
                output_attentions=output_attentions,
            )
        attentions = (tuple(out.decoder_attentions), tuple(out.cross_attentions)) if output_attentions else ((), ())
        return DecoderOutput(out.logits, *attentions, HFCache(out.past_key_values) if caching else None)

    def project(self, hidden: torch.Tensor) -> torch.Tensor:
        return hidden  # decode's hidden states are already logits

    def constrain(self, logits: torch.Tensor, step: int | None = None, limit: int | None = None) -> torch.Tensor:
        """Next-token logits (..., V) with what generate() would forbid or force at `step` applied (None: the
        positions along dim -2 are steps 0, 1, ...)."""
        if step is not None:
            self.rules.apply(logits, step, limit)
            return logits
        for position in range(logits.size(-2)):
            self.rules.apply(logits[..., position, :], position, limit)
        return logits

    def encoder_value_norms(self, enc: EncoderOutput) -> list[torch.Tensor]:
        """Per encoder layer (B, H, S): ||v_j W_o^h|| for the values an encode(output_attentions=True) recorded."""
        return [value_norms(v, output_weight(m)) for m, v in zip(self.modules_by_kind["encoder"], enc.values)]

    def decoder_value_norms(self, cache: HFCache) -> tuple[list[torch.Tensor], list[torch.Tensor]]:
        """Per decoder layer, ||v_j W_o^h|| of the cached self-attention (B, H, P) and cross-attention (B, H, S) values."""
        own, cross = cache.values()
        return (
            [value_norms(v, output_weight(m)) for m, v in zip(self.modules_by_kind["decoder_self"], own)],
            [value_norms(v, output_weight(m)) for m, v in zip(self.modules_by_kind["cross"], cross)],
        )

    def save_pretrained(self, folder) -> None:
        self.hf.save_pretrained(folder)  # safetensors


def describe(hf: PreTrainedModel, heads: int, width: int, layers: tuple[int, int], rules: Rules) -> TransformerConfig:
    """The model in our config's terms, for the code that reads sizes and special ids from it."""
    config = hf.config
    vocab = hf.get_output_embeddings().weight.size(0)
    positions = getattr(config, "max_position_embeddings", None) or getattr(config, "n_positions", None) or 512
    start = hf.generation_config.decoder_start_token_id
    if start is None:
        start = config.decoder_start_token_id
    eos = rules.eos_ids[0] if rules.eos_ids else config.eos_token_id
    pad = config.pad_token_id if config.pad_token_id is not None else start
    return TransformerConfig(
        src_vocab_size=vocab,
        tgt_vocab_size=vocab,
        d_model=width,
        n_heads=heads,
        n_encoder_layers=layers[0],
        n_decoder_layers=layers[1],
        d_ff=getattr(config, "d_ff", None) or getattr(config, "encoder_ffn_dim", None) or 4 * width,
        dropout=0.0,
        max_len=min(positions, MAX_POSITIONS),
        pad_id=pad,
        bos_id=start,
        eos_id=eos,
    )
