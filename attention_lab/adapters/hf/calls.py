"""The library's hook points (transformer.hooks) inside transformers' own forward pass, and the hooks that carry
them.

transformers runs its own forward; these are how the adapter reads and changes what happens inside it, at the
same names as our model's (attention_lab.adapters.hf.points puts a HookPoint on each module):
- one attention function, registered with transformers' AttentionInterface, runs each family's own eager attention
  with its values, weights and head outputs passed through the module's hook_v, hook_pattern and hook_z;
- a forward hook on each token-embedding module passes its output through encoder.hook_embed or decoder.hook_embed
  (a shared module: the side the call is on);
- a forward pre-hook and a forward hook on each encoder and decoder layer: hook_resid_pre and hook_resid_post;
- a forward hook on a module whose output is a point (the attention modules: hook_attn_out, hook_cross_attn_out;
  the feed-forward's last module: hook_ff_out; the stream after a sublayer where a module gives it: hook_resid_mid);
- a forward pre-hook on a norm whose input is a point that no module gives (a pre-LN BART-like layer's stream
  between sublayers, which it keeps in a local variable): read, never replaced.

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

ATTENTION = "attention_lab"  # the attn_implementation these models are loaded with


@dataclass
class Call:
    """One encode or decode call: its side, the first query position it covers, and what it recorded."""

    side: str = "encoder"  # "encoder" or "decoder": which hook_embed a shared embedding module passes through
    start: int = 0  # P, the positions the decoder's cache held before this call
    values: dict[int, torch.Tensor] | None = None  # filled, by attention module, when the call records values
    moved: dict[int, torch.Tensor] = field(default_factory=dict)  # by attention module: what hook_result added
    seen: set[int] = field(default_factory=set)  # the modules whose attention ran through the attention function


_current: contextvars.ContextVar[Call | None] = contextvars.ContextVar("attention_lab_call", default=None)


@contextlib.contextmanager
def calling(call: Call):
    """Run transformers' forward as `call`. Inside another call, the modules seen are counted in both (the load
    probe runs whole encode and decode calls inside one)."""
    outer = _current.get()
    if outer is not None:
        call.seen = outer.seen
    token = _current.set(call)
    try:
        yield call
    finally:
        _current.reset(token)


def attention(module: nn.Module, query, key, value, attention_mask, **kwargs):
    """The family's own eager attention, its queries, keys, values, scores, weights, head outputs and each head's
    result through the module's hook points; outside a call, eager unchanged. value (B, H, S, K) holds every key so
    far (transformers' cache is updated before this runs, and keeps the un-hooked keys and values)."""
    eager = sys.modules[type(module).__module__].eager_attention_forward
    call = _current.get()
    if call is None:
        return eager(module, query, key, value, attention_mask, **kwargs)
    call.seen.add(id(module))
    if call.values is not None:
        call.values[id(module)] = value
    hook_q, hook_k, hook_v, hook_scores, hook_pattern, hook_z, hook_result = module._attention_lab_points
    query, key, value = hook_q(query, call.start), hook_k(key, call.start), hook_v(value, call.start)
    if hook_scores.active():
        output, weights = scored(module, query, key, value, attention_mask, hook_scores, call.start, **kwargs)
    else:
        output, weights = eager(module, query, key, value, attention_mask, **kwargs)  # (B, T, H, K), (B, H, T, S)
    if hook_pattern.active():
        hooked = hook_pattern(weights, call.start)
        if hooked is not weights:  # what the head uses is what the hook gave
            output, weights = (hooked.to(value) @ value).transpose(1, 2), hooked
    if hook_z.active():
        output = hook_z(output.transpose(1, 2), call.start).transpose(1, 2)
    if hook_result.active():
        by_head = (module.out_proj if hasattr(module, "out_proj") else module.o).weight  # (D, H * K): BART's, T5's
        H, K = output.size(2), output.size(3)
        results = torch.einsum("bthk,dhk->bhtd", output, by_head.view(-1, H, K))
        hooked = hook_result(results, call.start)
        if hooked is not results:  # the module's output projection sums the heads: add what the hook moved
            call.moved[id(module)] = (hooked - results).sum(dim=1)
    return output.contiguous(), weights


def scored(module: nn.Module, query, key, value, attention_mask, point, start: int, **kwargs):
    """Eager attention with its scores (q k^T scaled, plus T5's position bias; before the mask) through `point`."""
    scaling = kwargs.get("scaling")
    scores = query @ key.transpose(2, 3) * (query.size(-1) ** -0.5 if scaling is None else scaling)
    if kwargs.get("position_bias") is not None:
        scores = scores + kwargs["position_bias"]
    scores = point(scores, start)
    if attention_mask is not None:
        scores = scores + attention_mask
    weights = nn.functional.dropout(scores.softmax(dim=-1), p=kwargs.get("dropout", 0.0), training=module.training)
    return (weights @ value).transpose(1, 2).contiguous(), weights


AttentionInterface.register(ATTENTION, attention)
# transformers builds no attention mask for an implementation it does not know: ours takes eager's (causal, padding).
AttentionMaskInterface.register(ATTENTION, eager_mask)


def embedded(module: nn.Module, args, output: torch.Tensor) -> torch.Tensor:
    """A token-embedding module's output through the hook_embed of the call's side."""
    call = _current.get()
    if call is None:
        return output
    return module._attention_lab_embed[call.side](output, call.start)


def layer_input(module: nn.Module, args, kwargs):
    """A layer's input (B, T, D) through its hook_resid_pre."""
    call = _current.get()
    if call is None:
        return None
    point = module._attention_lab_layer[0]
    if args:
        x = args[0]
        changed = point(x, call.start)
        return None if changed is x else ((changed, *args[1:]), kwargs)
    x = kwargs["hidden_states"]
    changed = point(x, call.start)
    return None if changed is x else (args, {**kwargs, "hidden_states": changed})


def layer_output(module: nn.Module, args, output):
    """A layer's output (B, T, D) through its hook_resid_post."""
    return _through(module._attention_lab_layer[1], output)


def module_output(module: nn.Module, args, output):
    """A module's output (B, T, D) (the first of a tuple) through the point it gives (_attention_lab_out), after
    what a hook at an attention's hook_result moved in it."""
    call = _current.get()
    moved = call.moved.pop(id(module), None) if call is not None else None
    if moved is not None:
        output = (output[0] + moved, *output[1:]) if isinstance(output, tuple) else output + moved
    return _through(module._attention_lab_out, output)


def _through(point, output):
    call = _current.get()
    if call is None:
        return output
    state = output[0] if isinstance(output, tuple) else output
    changed = point(state, call.start)
    if changed is state:
        return output
    return (changed, *output[1:]) if isinstance(output, tuple) else changed


def read_input(module: nn.Module, args) -> None:
    """A norm's input (B, T, D) read at the point it stands for (_attention_lab_read): the stream a pre-LN layer
    keeps in a local variable, which a hook can read but not replace."""
    call = _current.get()
    if call is None or not args:
        return
    point = module._attention_lab_read
    if point(args[0], call.start) is not args[0]:
        raise ValueError(
            f"{point.name} can be read but not replaced on this model: its pre-LN layers keep the stream there in a "
            "local variable of transformers' forward"
        )


def install(module: nn.Module, kind: str) -> None:
    """Put the hook of `kind` on a module ("embed", "layer", "out" or "read"), once however often it is wrapped."""
    if kind in getattr(module, "_attention_lab_hooks", set()):
        return
    if kind == "embed":
        module.register_forward_hook(embedded)
    elif kind == "layer":
        module.register_forward_pre_hook(layer_input, with_kwargs=True)
        module.register_forward_hook(layer_output)
    elif kind == "out":
        module.register_forward_hook(module_output)
    else:
        module.register_forward_pre_hook(read_input)
    module._attention_lab_hooks = getattr(module, "_attention_lab_hooks", set()) | {kind}
