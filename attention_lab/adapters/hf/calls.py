"""What one encode or decode call asks of transformers' forward pass, and the hooks that carry it out.

transformers runs its own forward; these hooks are how the adapter reads and changes what happens inside it:
- one attention function, registered with transformers' AttentionInterface, runs each family's own eager attention,
  then records the values and applies Interventions (ablated heads, edited weights, restored or recorded head
  outputs) through the same helpers our own attention uses;
- a forward hook on each token-embedding module puts given embeddings in place of the lookup (attribution);
- a forward hook on each encoder and decoder layer restores or records its output (patching), and keeps the decoder
  layers' outputs (the layer-by-layer lens);
- a forward hook on each attention module and a pre-hook on the norm beside it keep the attention's output and what
  the norm read, when a call asks for what each sublayer mixed (contributions): the norm read the residual stream
  if it ran first (pre-LN), or the residual plus the attention's output if it ran after (post-LN).

Outside a call (a plain transformers forward or generate()), every hook leaves the model as transformers made it.
The call lives in a context variable, so concurrent requests on one shared model never see each other's.
"""

from __future__ import annotations

import contextlib
import contextvars
import sys
from dataclasses import dataclass, field

import torch
from torch import nn
from transformers import AttentionInterface
from transformers.masking_utils import AttentionMaskInterface, eager_mask

from transformer.attention import HeadControl, edit_weights, keep_heads, patch_heads
from transformer.layers import StateControl

ATTENTION = "attention_lab"  # the attn_implementation these models are loaded with


@dataclass
class Call:
    """One encode or decode call's instructions to the hooks, keyed by module, and what they recorded."""

    controls: dict[int, HeadControl] = field(default_factory=dict)
    states: dict[int, StateControl] = field(default_factory=dict)  # by layer module: its output restored or recorded
    values: dict[int, torch.Tensor] | None = None  # filled when the call records values
    embeds: torch.Tensor | None = None  # (B, T, D) in place of the token-embedding lookup
    layer_states: list[torch.Tensor] | None = None  # filled, layer by layer, when the call keeps them
    seen: set[int] = field(default_factory=set)  # the modules whose attention ran through the attention function
    mixing_reads: dict[int, tuple[int, torch.Tensor]] | None = (
        None  # by attention or norm module: (order, what it gave/read)
    )


_current: contextvars.ContextVar[Call | None] = contextvars.ContextVar("attention_lab_call", default=None)


@contextlib.contextmanager
def calling(call: Call):
    """Run transformers' forward with `call`'s instructions. Inside another call, the modules seen are counted in
    both (the load probe runs whole encode and decode calls inside one)."""
    outer = _current.get()
    if outer is not None:
        call.seen = outer.seen
    token = _current.set(call)
    try:
        yield call
    finally:
        _current.reset(token)


def attention(module: nn.Module, query, key, value, attention_mask, **kwargs):
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
    if control.mixing is not None:
        control.mixing.attended(
            weights, value, module.out_proj if hasattr(module, "out_proj") else module.o, control.keep
        )
    heads = weights.to(value) @ value if control.weights is not None else output.transpose(1, 2)  # (B, H, T, K)
    return patch_heads(keep_heads(heads, control), control).transpose(1, 2).contiguous(), weights


AttentionInterface.register(ATTENTION, attention)
# transformers builds no attention mask for an implementation it does not know: ours takes eager's (causal, padding).
AttentionMaskInterface.register(ATTENTION, eager_mask)


def install(embeddings: list[nn.Module], layers: list[nn.Module], sublayers: list[tuple[nn.Module, nn.Module]]) -> None:
    """Put the hooks on a model's token-embedding modules, its encoder and decoder layers, and each attention
    module and the norm beside it (`sublayers`), once however often it is wrapped."""
    for module, hook in [
        *((m, replace_embeddings) for m in embeddings),
        *((m, layer_output) for m in layers),
        *((attention, attention_output) for attention, _ in sublayers),
    ]:
        if not getattr(module, "_attention_lab_hook", False):
            module.register_forward_hook(hook)
            module._attention_lab_hook = True
    for _, norm in sublayers:
        if not getattr(norm, "_attention_lab_hook", False):
            norm.register_forward_pre_hook(norm_input)
            norm._attention_lab_hook = True


def attention_output(module: nn.Module, args, output) -> None:
    """Keep an attention module's output (B, T, D), its output projection's bias included, for the call's mixing."""
    call = _current.get()
    if call is not None and call.mixing_reads is not None:
        call.mixing_reads[id(module)] = (
            len(call.mixing_reads),
            (output[0] if isinstance(output, tuple) else output).detach(),
        )


def norm_input(module: nn.Module, args) -> None:
    """Keep what a sublayer's norm reads (B, T, D) for the call's mixing."""
    call = _current.get()
    if call is not None and call.mixing_reads is not None and args:
        call.mixing_reads[id(module)] = (len(call.mixing_reads), args[0].detach())


def replace_embeddings(module: nn.Module, args, output: torch.Tensor) -> torch.Tensor:
    """A token-embedding module's output, or the current call's embeddings in its place."""
    call = _current.get()
    if call is None or call.embeds is None:
        return output
    if call.embeds.shape != output.shape:
        raise ValueError(f"embeddings of shape {tuple(call.embeds.shape)} given for {tuple(output.shape)} tokens")
    return call.embeds.to(output.dtype)


def layer_output(module: nn.Module, args, output):
    """A layer's output (B, T, D) restored or recorded as the current call's StateControl for it says, and kept when
    the call asks for the (decoder) layer states; outside a call, as it was."""
    call = _current.get()
    if call is None:
        return output
    state = output[0] if isinstance(output, tuple) else output
    control = call.states.get(id(module))
    if control is not None:
        state = control(state)
    if call.layer_states is not None:
        call.layer_states.append(state)
    if control is None:
        return output
    return (state, *output[1:]) if isinstance(output, tuple) else state
