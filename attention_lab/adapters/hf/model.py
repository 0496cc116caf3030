"""A transformers encoder–decoder (Marian/opus-mt, BART, mBART, M2M100/NLLB, T5) as the library's contract
(transformer.contract.Seq2SeqModel) describes a model.

The forward pass is transformers' own encoder and decoder with its eager attention; the library's hook points
(transformer.hooks) stand in it at the same names as in our model (attention_lab.adapters.hf.points, .calls), so
interventions, patching, attribution, the lens and the contributions work on it as on ours. The output layer is the
family's own (its bias and scaling included). One probe step at load checks that all of this holds for the model at
hand: every attention module ran through the hooks, and the decoder's output through `final_norm` and `project`
gives the model's own logits; it also sees whether each layer's norms come after the residual sums (post-LN) or
before (pre-LN). A model that fails it is refused rather than drawn wrong.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable

import torch
from torch import nn
from transformers import PreTrainedModel
from transformers.modeling_outputs import BaseModelOutput

from transformer.attention import value_norms
from transformer.checkpoint import CheckpointError
from transformer.config import KINDS
from transformer.contract import AttentionSublayer, DecoderOutput, EncoderOutput
from transformer.hooks import recording

from .calls import ATTENTION, Call, calling
from .config import describe, rules_of
from .points import put_points


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


def sublayer_norms(hf: PreTrainedModel) -> dict[str, list[nn.Module]]:
    """The norm beside each attention module, by kind as attention_modules gives them: before it (pre-LN: mBART,
    NLLB, T5) or after the residual sum (post-LN: BART, Marian); which one, the order they run in says."""
    encoder, decoder = hf.get_encoder(), hf.get_decoder()
    if hasattr(encoder, "block"):
        return {
            "encoder": [block.layer[0].layer_norm for block in encoder.block],
            "decoder_self": [block.layer[0].layer_norm for block in decoder.block],
            "cross": [block.layer[1].layer_norm for block in decoder.block],
        }
    return {
        "encoder": [layer.self_attn_layer_norm for layer in encoder.layers],
        "decoder_self": [layer.self_attn_layer_norm for layer in decoder.layers],
        "cross": [layer.encoder_attn_layer_norm for layer in decoder.layers],
    }


def output_weight(module: nn.Module) -> torch.Tensor:
    """W_o (D, H * K) of an attention module: BART's out_proj or T5's o."""
    return (module.out_proj if hasattr(module, "out_proj") else module.o).weight


def n_heads(module: nn.Module) -> int:
    return module.num_heads if hasattr(module, "num_heads") else module.n_heads


def decoder_layers(hf: PreTrainedModel) -> nn.ModuleList:
    decoder = hf.get_decoder()
    return decoder.block if hasattr(decoder, "block") else decoder.layers


def encoder_layers(hf: PreTrainedModel) -> nn.ModuleList:
    encoder = hf.get_encoder()
    return encoder.block if hasattr(encoder, "block") else encoder.layers


class HFCache:
    """transformers' EncoderDecoderCache, meeting the contract's Cache: truncate and select return new caches and
    leave this one as it was (layers are copied shallowly: transformers' own update replaces tensors, never edits
    them)."""

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

    def self_keys_values(self) -> list[tuple[torch.Tensor, torch.Tensor]]:
        """Per decoder layer, the cached self-attention keys and values, each (B, H, P, K)."""
        return [(layer.keys, layer.values) for layer in self.inner.self_attention_cache.layers]

    def values(self) -> tuple[list[torch.Tensor], list[torch.Tensor]]:
        """Per decoder layer, the cached self-attention (B, H, P, K) and cross-attention (B, H, S, K) values."""
        own = [layer.values for layer in self.inner.self_attention_cache.layers]
        return own, [layer.values for layer in self.inner.cross_attention_cache.layers]


class HFSeq2Seq(nn.Module):
    """A transformers AutoModelForSeq2SeqLM, loaded with attn_implementation=ATTENTION, meeting Seq2SeqModel.

    `config` (an HFConfig) describes it: bos_id is the decoder's start token (pad for Marian and T5, eos for BART);
    `rules` are what its generate() forces or forbids at a step; `special_ids` add the tokenizer's own (BART's <s>,
    mBART's and NLLB's language codes) to pad, start and eos.
    """

    def __init__(self, hf: PreTrainedModel, name: str = "model", special_ids: Iterable[int] = ()) -> None:
        super().__init__()
        if hf.config._attn_implementation != ATTENTION:  # weights and values are read through our attention function
            hf.set_attn_implementation(ATTENTION)
        self.hf = hf
        self.eval()  # as loaded models are: Seq2SeqPipeline.generate puts back the mode it found
        self.modules_by_kind = attention_modules(hf)
        heads = {n_heads(m) for ms in self.modules_by_kind.values() for m in ms}
        if len(heads) != 1:
            raise CheckpointError(f"{name}: layers with different numbers of heads ({sorted(heads)}) are not supported")
        self.rules = rules_of(hf.generation_config)
        layers = (len(self.modules_by_kind["encoder"]), len(self.modules_by_kind["cross"]))
        width = output_weight(self.modules_by_kind["encoder"][0]).size(0)
        self.config = describe(hf, heads.pop(), width, layers, self.rules)
        self.special_ids = frozenset({self.config.pad_id, self.config.bos_id, self.config.eos_id, *special_ids})
        decoder = hf.get_decoder()
        self._norm = getattr(decoder, "layer_norm", None) or getattr(decoder, "final_layer_norm", None)
        self._scale_output = bool(getattr(hf.config, "scale_decoder_outputs", False))  # T5's tied output layer
        self._layers = {"encoder": list(encoder_layers(hf)), "decoder": list(decoder_layers(hf))}
        try:  # a layout whose norms are named otherwise still decodes; only its contributions cannot be read
            self._norms = sublayer_norms(hf)
        except AttributeError:
            self._norms = {kind: [] for kind in self.modules_by_kind}
        self._post_ln = self._norms_follow()
        put_points(hf, self.modules_by_kind, self._layers, self._post_ln)
        self._probe(name)

    @torch.no_grad()
    def _norms_follow(self) -> bool:
        """Whether the first encoder layer's norm beside its attention runs after it (post-LN: BART, Marian) or
        before (pre-LN: mBART, NLLB, T5), seen in one plain forward of a two-token source."""
        order = []
        attention, norms = self.modules_by_kind["encoder"][0], self._norms["encoder"]
        if not norms:
            return False
        handles = [m.register_forward_hook(lambda *_, m=m: order.append(m)) for m in (attention, norms[0])]
        try:
            src = torch.full((1, 2), self.config.eos_id, device=next(self.parameters()).device)
            self.hf.get_encoder()(input_ids=src)
        finally:
            for handle in handles:
                handle.remove()
        return order.index(norms[0]) > order.index(attention)

    @torch.no_grad()
    def _probe(self, name: str) -> None:
        """Decode one step of a two-token source through the hooks and through transformers' own forward: every
        attention module must have run through ours (a family that computes attention its own way would be drawn
        from nothing and ignore ablations), and final_norm and project must give transformers' logits."""
        device = next(self.parameters()).device
        src = torch.full((1, 2), self.config.eos_id, device=device)
        start = torch.full((1, 1), self.config.bos_id, device=device)
        last = f"decoder.layers.{self.config.n_decoder_layers - 1}.hook_resid_post"
        with calling(Call()) as call, recording([last]) as states:
            enc = self.encode(src)
            dec = self.decode(start, enc.memory, enc.src_mask)
        theirs = self.hf(encoder_outputs=BaseModelOutput(last_hidden_state=enc.memory), decoder_input_ids=start).logits
        missed = [m for ms in self.modules_by_kind.values() for m in ms if id(m) not in call.seen]
        if missed:
            raise CheckpointError(
                f"{name}: {self.config.model_type} computes attention outside transformers' attention interface "
                f"({type(missed[0]).__name__}), so Attention Lab cannot read or change its heads"
            )
        same = last in states and torch.allclose(self.final_norm(states[last]), dec.hidden, atol=1e-4, rtol=1e-4)
        if not same or not torch.allclose(self.project(dec.hidden), theirs, atol=1e-4, rtol=1e-4):
            raise CheckpointError(
                f"{name}: {self.config.model_type} computes its decoder's output or logits in a way Attention Lab "
                "does not know, so its next-token probabilities would be wrong"
            )

    def encode(self, src: torch.Tensor, output_attentions: bool = False) -> EncoderOutput:
        """src (B, S) -> memory (B, S, D), the source mask (B, 1, 1, S), and per-layer weights and values if asked."""
        src_mask = (src != self.config.pad_id)[:, None, None, :]
        call = Call("encoder", 0, values={} if output_attentions else None)
        with calling(call):
            out = self.hf.get_encoder()(
                input_ids=src, attention_mask=src_mask[:, 0, 0].long(), output_attentions=output_attentions
            )
        if not output_attentions:
            return EncoderOutput(out.last_hidden_state, src_mask, ())
        values = tuple(call.values[id(m)] for m in self.modules_by_kind["encoder"])
        return EncoderOutput(out.last_hidden_state, src_mask, tuple(out.attentions), values)

    def decode(
        self,
        tgt: torch.Tensor,
        memory: torch.Tensor,
        src_mask: torch.Tensor,
        cache: HFCache | None = None,
        use_cache: bool = False,
        output_attentions: bool = False,
    ) -> DecoderOutput:
        """The decoder over tgt (B, T), after the cached positions if any: its output (B, T, D), before the family's
        output layer (see project). Hook points see start = the cache's length."""
        caching = use_cache or cache is not None
        with calling(Call("decoder", cache.length if cache is not None else 0)):
            out = self.hf.get_decoder()(
                input_ids=tgt,
                encoder_hidden_states=memory,
                encoder_attention_mask=src_mask[:, 0, 0].long(),
                past_key_values=cache.copy() if cache is not None else None,
                use_cache=caching,
                output_attentions=output_attentions,
            )
        attentions = (tuple(out.attentions), tuple(out.cross_attentions)) if output_attentions else ((), ())
        new_cache = HFCache(out.past_key_values) if caching else None
        return DecoderOutput(out.last_hidden_state, *attentions, new_cache)

    def cross_keys_values(self, memory: torch.Tensor) -> list[tuple[torch.Tensor, torch.Tensor]]:
        """Per decoder layer, the cross-attention's keys and values of `memory` (B, S, D), each (B, H, S, K), as the
        family's attention projects them (BART's k_proj and v_proj, T5's k and v, neither scaled)."""
        B, S = memory.shape[:2]
        out = []
        for module in self.modules_by_kind["cross"]:
            k, v = (module.k_proj, module.v_proj) if hasattr(module, "k_proj") else (module.k, module.v)
            heads = n_heads(module)
            out.append(tuple(p(memory).view(B, S, heads, -1).transpose(1, 2) for p in (k, v)))
        return out

    def cache_from(self, layers: list[tuple[torch.Tensor, ...]]) -> HFCache:
        """A cache of given tensors: per decoder layer (self_k, self_v, cross_k, cross_v), (B, H, P or S, K), the
        cross-attention's marked as filled, so transformers reads them rather than projecting the memory again."""
        from transformers.cache_utils import DynamicCache, EncoderDecoderCache

        own, source = DynamicCache(), DynamicCache()
        for index, (self_k, self_v, cross_k, cross_v) in enumerate(layers):
            own.update(self_k, self_v, index)
            source.update(cross_k, cross_v, index)
        cache = EncoderDecoderCache(own, source)
        cache.is_updated = dict.fromkeys(range(len(layers)), True)
        return HFCache(cache)

    def sublayer(self, kind: str, layer: int) -> AttentionSublayer:
        """The attention of `kind` in `layer`: its output projection (BART's out_proj, T5's o, which has no bias)
        and, post-LN, the norm after its residual sum (as the load probe saw the norms run)."""
        if kind not in KINDS:
            raise ValueError(f"kind must be one of {', '.join(KINDS)} (got {kind!r})")
        modules = self.modules_by_kind[kind]
        if not 0 <= layer < len(modules):
            raise ValueError(f"layer must be in 0..{len(modules) - 1} (got {layer})")
        proj = modules[layer].out_proj if hasattr(modules[layer], "out_proj") else modules[layer].o
        if self._post_ln and not self._norms[kind]:
            raise ValueError(f"{self.config.model_type}: its norms are laid out in a way Attention Lab does not know")
        return AttentionSublayer(proj.weight, proj.bias, self._norms[kind][layer] if self._post_ln else None)

    def project(self, hidden: torch.Tensor) -> torch.Tensor:
        """The family's output layer: T5 scales a tied one by D^-0.5; BART, mBART and Marian add final_logits_bias."""
        if self._scale_output:
            hidden = hidden * self.hf.model_dim**-0.5
        logits = self.hf.get_output_embeddings()(hidden)
        bias = getattr(self.hf, "final_logits_bias", None)
        return logits if bias is None else logits + bias.reshape(-1).to(logits)

    def final_norm(self, states: torch.Tensor) -> torch.Tensor:
        """The decoder's closing norm: mBART's and NLLB's layer_norm, T5's final_layer_norm; none for BART and
        Marian, whose last layer ends in a norm of its own."""
        return states if self._norm is None else self._norm(states)

    def embed_source(self, src: torch.Tensor) -> torch.Tensor:
        """The encoder's token-embedding module's output (BART's and NLLB's are scaled in it; Marian scales after)."""
        return self.hf.get_encoder().embed_tokens(src)

    def embed_target(self, tgt: torch.Tensor) -> torch.Tensor:
        return self.hf.get_decoder().embed_tokens(tgt)

    def encoder_value_norms(self, enc: EncoderOutput) -> list[torch.Tensor]:
        """Per encoder layer (B, H, S): ||v_j W_o^h|| for the values an encode(output_attentions=True) recorded."""
        return [value_norms(v, output_weight(m)) for m, v in zip(self.modules_by_kind["encoder"], enc.values)]

    def decoder_value_norms(
        self, cache: HFCache, start: int = 0, cross: bool = True
    ) -> tuple[list[torch.Tensor], list[torch.Tensor]]:
        """Per decoder layer, ||v_j W_o^h|| of the cached self-attention values of keys start.. (B, H, P - start) and,
        if `cross`, of the cross-attention values (B, H, S)."""
        own, theirs = cache.values()
        own_norms = [
            value_norms(v[:, :, start:], output_weight(m)) for m, v in zip(self.modules_by_kind["decoder_self"], own)
        ]
        if not cross:
            return own_norms, []
        return own_norms, [value_norms(v, output_weight(m)) for m, v in zip(self.modules_by_kind["cross"], theirs)]

    def save_pretrained(self, folder) -> None:
        self.hf.save_pretrained(folder)  # safetensors
