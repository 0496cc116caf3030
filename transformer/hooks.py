"""Named hook points: places in the forward pass where a tensor can be read or replaced (as TransformerLens's
HookPoint and run_with_hooks).

A HookPoint is a pass-through at a named place: `point(x, start)` returns x, or what the active hooks at its name
make of it. A hook is `fn(tensor, point) -> tensor | None` (None keeps the tensor); `point` is an At, which says the
point's `name` and `start`, the first query position the call covers (a decoder call with a KV cache of P positions
has start P; 0 otherwise), so a hook tied to a position acts right whether the decoder runs one position at a time
or over a whole prefix. Hooks are active for a scope, per thread and per asyncio task (a ContextVar): a request
served on a shared model never sees another's.

    with hooks.using([("decoder.layers.0.cross_attn.hook_z", zero_head_2)]):   # a name, or a predicate on names
        logits = model(src, tgt).logits
    with hooks.recording(lambda name: name.endswith("hook_resid_post")) as cache:
        model(src, tgt)                                                         # cache[name]: the tensor there

The names, the same on our model and on the adapters' models (hook_names lists them for a config). Shapes:
B batch, H heads, S source positions, T this call's queries, P cached positions, D width, K head width.

    encoder.hook_embed                          (B, S, D) the source's token embeddings before positions
    encoder.layers.{l}.hook_resid_pre           (B, S, D) the residual stream entering layer l
    encoder.layers.{l}.self_attn.hook_q         (B, H, S, K) each head's queries           } made only when hooked
    encoder.layers.{l}.self_attn.hook_k         (B, H, S, K) each head's keys              }
    encoder.layers.{l}.self_attn.hook_v         (B, H, S, K) each head's values
    encoder.layers.{l}.self_attn.hook_attn_scores (B, H, S, S) q k^T / sqrt(K), before the mask: softmax of them,
                                                masked, is the pattern (made only when hooked)
    encoder.layers.{l}.self_attn.hook_pattern   (B, H, S, S) each head's weights after softmax (what it uses)
    encoder.layers.{l}.self_attn.hook_z         (B, H, S, K) each head's output (pattern @ v), before W_o
    encoder.layers.{l}.self_attn.hook_result    (B, H, S, D) each head's output through its K columns of W_o: their
                                                sum over heads plus W_o's bias is hook_attn_out (made only when hooked)
    encoder.layers.{l}.hook_attn_out            (B, S, D) the self-attention sublayer's output (W_o and bias)
    encoder.layers.{l}.hook_resid_mid           (B, S, D) the stream after self-attention (after its norm, post-LN)
    encoder.layers.{l}.hook_ff_out              (B, S, D) the feed-forward sublayer's output
    encoder.layers.{l}.hook_resid_post          (B, S, D) the layer's output
    decoder.hook_embed                          (B, T, D)
    decoder.layers.{l}.hook_resid_pre           (B, T, D)
    decoder.layers.{l}.self_attn.hook_q         (B, H, T, K)
    decoder.layers.{l}.self_attn.hook_k         (B, H, P+T, K) every key so far (the cache keeps the un-hooked)
    decoder.layers.{l}.self_attn.hook_v         (B, H, P+T, K) (the same)
    decoder.layers.{l}.self_attn.hook_attn_scores (B, H, T, P+T)
    decoder.layers.{l}.self_attn.hook_pattern   (B, H, T, P+T)
    decoder.layers.{l}.self_attn.hook_z         (B, H, T, K)
    decoder.layers.{l}.self_attn.hook_result    (B, H, T, D)
    decoder.layers.{l}.hook_attn_out            (B, T, D)
    decoder.layers.{l}.hook_resid_mid           (B, T, D) after self-attention, entering cross-attention
    decoder.layers.{l}.cross_attn.hook_q        (B, H, T, K)
    decoder.layers.{l}.cross_attn.hook_k        (B, H, S, K) (on cached steps too, on the cached keys)
    decoder.layers.{l}.cross_attn.hook_v        (B, H, S, K) (the same, values)
    decoder.layers.{l}.cross_attn.hook_attn_scores (B, H, T, S)
    decoder.layers.{l}.cross_attn.hook_pattern  (B, H, T, S)
    decoder.layers.{l}.cross_attn.hook_z        (B, H, T, K)
    decoder.layers.{l}.cross_attn.hook_result   (B, H, T, D)
    decoder.layers.{l}.hook_cross_attn_out      (B, T, D)
    decoder.layers.{l}.hook_resid_mid_cross     (B, T, D) after cross-attention, entering the feed-forward
    decoder.layers.{l}.hook_ff_out              (B, T, D)
    decoder.layers.{l}.hook_resid_post          (B, T, D)

Each point fires once per layer per encode (encoder names) or decode (decoder names) call. While a hook is active at
a scores or pattern point, attention computes its weights explicitly (not SDPA's fused kernel); while one is active
at a result point, the output is the heads' results summed (not one matmul). Unhooked, neither is made. On the
adapters' models the scores are the family's own logits before its mask (T5's position bias in them, unscaled).
"""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field

import torch

from .config import ModelConfig, n_layers

HookFn = Callable[[torch.Tensor, "At"], "torch.Tensor | None"]
Hook = tuple["str | Callable[[str], bool]", HookFn]  # (a name, or a predicate on names; the function)

ATTENTION = {"encoder": "encoder.layers.{}.self_attn", "decoder_self": "decoder.layers.{}.self_attn"}
ATTENTION["cross"] = "decoder.layers.{}.cross_attn"
HEAD_POINTS = ("hook_q", "hook_k", "hook_v", "hook_attn_scores", "hook_pattern", "hook_z", "hook_result")
ENCODER_LAYER_POINTS = ("hook_resid_pre", "hook_attn_out", "hook_resid_mid", "hook_ff_out", "hook_resid_post")
DECODER_LAYER_POINTS = ("hook_resid_pre", "hook_attn_out", "hook_resid_mid", "hook_cross_attn_out")
DECODER_LAYER_POINTS += ("hook_resid_mid_cross", "hook_ff_out", "hook_resid_post")


@dataclass(frozen=True)
class At:
    """Where a hook is called: the point's name, and the first query position the call covers."""

    name: str
    start: int = 0


@dataclass
class Hooks:
    """The hooks active in one scope, outer scopes' first; which run at a name is worked out once per name."""

    hooks: tuple[Hook, ...]
    _by_name: dict[str, tuple[HookFn, ...]] = field(default_factory=dict)

    def at(self, name: str) -> tuple[HookFn, ...]:
        found = self._by_name.get(name)
        if found is None:  # two threads may both work it out: the same answer, so no lock
            found = tuple(fn for where, fn in self.hooks if (where == name if isinstance(where, str) else where(name)))
            self._by_name[name] = found
        return found


_active: contextvars.ContextVar[Hooks | None] = contextvars.ContextVar("transformer_hooks", default=None)


class HookPoint:
    """A pass-through at a named place. Not a module: it has no parameters and leaves state_dict as it is.

    Examples:
        >>> point = HookPoint("encoder.hook_embed")
        >>> x = torch.ones(1, 2, 4)
        >>> point(x) is x
        True
        >>> with using([("encoder.hook_embed", lambda t, at: 2 * t)]):
        ...     point(x).sum().item()
        16.0
    """

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return f"HookPoint({self.name!r})"

    def __call__(self, x: torch.Tensor, start: int = 0) -> torch.Tensor:
        active = _active.get()
        if active is None:  # the usual path: one lookup, no allocation
            return x
        for fn in active.at(self.name):
            changed = fn(x, At(self.name, start))
            if changed is not None:
                if changed.shape != x.shape:
                    raise ValueError(f"a hook at {self.name} returned {tuple(changed.shape)} for {tuple(x.shape)}")
                x = changed
        return x

    def active(self) -> bool:
        """Whether any hook is active at this point now (attention then computes explicit weights)."""
        hooks = _active.get()
        return hooks is not None and bool(hooks.at(self.name))


@contextlib.contextmanager
def using(hooks: Iterable[Hook]) -> Iterator[None]:
    """Activate `hooks` for the scope, added to those of any outer scope (which run first at a name)."""
    hooks = tuple(hooks)
    for where, fn in hooks:
        if not (isinstance(where, str) or callable(where)) or not callable(fn):
            raise TypeError(f"a hook is (name or predicate, fn(tensor, point)) (got {(where, fn)!r})")
    outer = _active.get()
    token = _active.set(Hooks((outer.hooks if outer else ()) + hooks) if hooks or outer else None)
    try:
        yield
    finally:
        _active.reset(token)


@contextlib.contextmanager
def recording(names: Iterable[str] | Callable[[str], bool]) -> Iterator[dict[str, torch.Tensor]]:
    """Record the tensor at each chosen name (a list of names, or a predicate), as it leaves the point's earlier
    hooks, into the dict yielded (TransformerLens's run_with_cache). A name a call covers again is overwritten: with a
    KV cache, the last call's positions."""
    cache: dict[str, torch.Tensor] = {}
    chosen = set(names) if not callable(names) else names
    where = chosen.__contains__ if isinstance(chosen, set) else chosen

    def keep(x: torch.Tensor, at: At) -> None:
        cache[at.name] = x

    with using([(where, keep)]):
        yield cache


def attention_name(kind: str, layer: int, point: str) -> str:
    """The name of a head point (one of HEAD_POINTS) of attention `kind` (one of KINDS) in `layer`."""
    return f"{ATTENTION[kind].format(layer)}.{point}"


def hook_names(config: ModelConfig) -> list[str]:
    """Every hook point's name for a model of this config, in the order an encode then a decode fires them."""
    names = ["encoder.hook_embed"]
    for layer in range(n_layers(config, "encoder")):
        first, *rest = ENCODER_LAYER_POINTS
        names += [f"encoder.layers.{layer}.{first}"]
        names += [attention_name("encoder", layer, p) for p in HEAD_POINTS]
        names += [f"encoder.layers.{layer}.{p}" for p in rest]
    names.append("decoder.hook_embed")
    for layer in range(n_layers(config, "decoder_self")):
        at = f"decoder.layers.{layer}"
        names += [f"{at}.hook_resid_pre", *(attention_name("decoder_self", layer, p) for p in HEAD_POINTS)]
        names += [f"{at}.hook_attn_out", f"{at}.hook_resid_mid"]
        names += [attention_name("cross", layer, p) for p in HEAD_POINTS]
        names += [f"{at}.{p}" for p in DECODER_LAYER_POINTS[3:]]
    return names


def name_points(root: torch.nn.Module) -> None:
    """Give every HookPoint held by a module of `root` its full name: the module's path, then the point's own
    (encoder.layers.0.self_attn + hook_v). Called once, when the model is built."""
    for path, module in root.named_modules():
        for attr, value in vars(module).items():
            if isinstance(value, HookPoint):
                value.name = f"{path}.{attr}" if path else attr
