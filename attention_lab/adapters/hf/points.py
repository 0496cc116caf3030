"""Where each of the library's hook points (transformer.hooks) stands in a transformers model, in the BART layout
(BART, Marian, mBART, M2M100/NLLB) or the T5 layout, and a HookPoint of that name put on the module there.

    hook_embed                      the encoder's or the decoder's embed_tokens (its output: before positions)
    hook_resid_pre, hook_resid_post a layer's input and output
    self_attn / cross_attn hook_q, hook_k, hook_v, hook_attn_scores, hook_pattern, hook_z, hook_result
                                    inside the attention function (attention_lab.adapters.hf.calls)
    hook_attn_out, hook_cross_attn_out
                                    the attention module's output (its output projection's bias included)
    hook_ff_out                     BART's fc2, T5's DenseReluDense
    hook_resid_mid, hook_resid_mid_cross
                                    T5: the self- and cross-attention sublayer's output (T5LayerSelfAttention, ...);
                                    post-LN BART-like: the norm after the sum (self_attn_layer_norm, ...); pre-LN
                                    BART-like (mBART, NLLB): the next norm's input, read-only (the layer keeps that
                                    stream in a local variable: a hook that returns another tensor there is an error)
"""

from __future__ import annotations

from torch import nn
from transformers import PreTrainedModel

from transformer.hooks import HEAD_POINTS, HookPoint, attention_name

from .calls import install


def _put(module: nn.Module, attribute: str, point: HookPoint | tuple, kind: str) -> None:
    setattr(module, attribute, point)
    install(module, kind)


def _mids(layer: nn.Module, decoder: bool, post_ln: bool) -> list[tuple[str, nn.Module, str]]:
    """(point, module, "out" or "read") of the streams between a layer's sublayers."""
    if hasattr(layer, "layer"):  # T5: each sublayer is a module whose output is the stream after it
        names = ["hook_resid_mid", "hook_resid_mid_cross"] if decoder else ["hook_resid_mid"]
        return [(name, layer.layer[i], "out") for i, name in enumerate(names)]
    if post_ln:  # the norm after each sum gives the stream
        norms = [layer.self_attn_layer_norm, *([layer.encoder_attn_layer_norm] if decoder else [])]
        return [(name, norm, "out") for name, norm in zip(("hook_resid_mid", "hook_resid_mid_cross"), norms)]
    nexts = [layer.encoder_attn_layer_norm, layer.final_layer_norm] if decoder else [layer.final_layer_norm]
    return [(name, norm, "read") for name, norm in zip(("hook_resid_mid", "hook_resid_mid_cross"), nexts)]


def put_points(
    hf: PreTrainedModel, attentions: dict[str, list[nn.Module]], layers: dict[str, list[nn.Module]], post_ln: bool
) -> None:
    """Put every hook point on `hf`'s modules: `attentions` by kind and `layers` by stack ("encoder", "decoder")
    as the adapter found them; `post_ln` as its load probe saw the norms run."""
    embeds = {}
    for side, stack in (("encoder", hf.get_encoder()), ("decoder", hf.get_decoder())):
        embeds.setdefault(id(stack.embed_tokens), (stack.embed_tokens, {}))[1][side] = HookPoint(f"{side}.hook_embed")
    for module, points in embeds.values():  # a shared embedding module passes through the call's side's point
        _put(module, "_attention_lab_embed", points, "embed")
    for kind, modules in attentions.items():
        for layer, module in enumerate(modules):
            points = tuple(HookPoint(attention_name(kind, layer, p)) for p in HEAD_POINTS)
            module._attention_lab_points = points
            out = "hook_cross_attn_out" if kind == "cross" else "hook_attn_out"
            side = "encoder" if kind == "encoder" else "decoder"
            _put(module, "_attention_lab_out", HookPoint(f"{side}.layers.{layer}.{out}"), "out")
    for side, stack in layers.items():
        for layer, module in enumerate(stack):
            at = f"{side}.layers.{layer}"
            _put(
                module,
                "_attention_lab_layer",
                (HookPoint(f"{at}.hook_resid_pre"), HookPoint(f"{at}.hook_resid_post")),
                "layer",
            )
            ff = module.layer[-1].DenseReluDense if hasattr(module, "layer") else module.fc2
            _put(ff, "_attention_lab_out", HookPoint(f"{at}.hook_ff_out"), "out")
            for name, where, kind in _mids(module, side == "decoder", post_ln):
                attribute = "_attention_lab_out" if kind == "out" else "_attention_lab_read"
                _put(where, attribute, HookPoint(f"{at}.{name}"), kind)
