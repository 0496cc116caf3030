"""Source and target contributions to each prediction: ALTI+ (Ferrando et al. 2022, "Towards Opening the Black Box of
Neural Machine Translation: Source and Target Contributions to the Model's Predictions"), built on ALTI (Ferrando,
Gállego & Costa-jussà 2022, "Measuring the Mixing of Contextual Information in the Transformer").

An attention sublayer's output at query i is a sum of one term per input. Term j is what key j adds through every
head, sum_h a_ij^h v_j^h W_o^h. In self-attention the residual stream is added to the query's own term; in
cross-attention it is a term of its own, the target prefix's way into the sum. A LayerNorm after the sum (post-LN)
is linear once its standard deviation is fixed at the whole sum's, so each term goes through it as
L(t) = gamma * (t - mean(t)) / sigma. Term j's contribution is how close it is to the whole y, the sum of the terms:
max(0, ||y||_1 - ||y - t_j||_1), normalised over j to add up to 1. The biases belong to no token and are left out of
y; the feed-forward layers and final norms act on each position alone and leave contributions as they are.

Contributions go through the layers by matrix products. The encoder's give each encoder output's contributions from
the source tokens. In the decoder, self-attention mixes the prefix positions' contributions, and cross-attention
mixes the residual's (the prefix's) with the encoder outputs' (the source's). Each step's row adds up to 1: its
source part is the source's share of the prediction, its prefix part the target prefix's.

The terms are read from the model's own forward pass, at its hook points (transformer.hooks: each attention's
hook_pattern and hook_v, the residual stream at hook_resid_pre or hook_resid_mid), with the output projection and the
post-norm from the contract's `sublayer`, so any model that meets the contract (transformer.contract) gets them: ours,
and other families through the adapters beside this library.
"""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Iterator
from dataclasses import dataclass, field, replace

import torch
from torch import nn

from . import hooks
from .config import KINDS, n_layers
from .contract import Seq2SeqModel
from .forced import one_run, run_with_cache
from .interventions import Head, Interventions

_EXACT: contextvars.ContextVar[torch.dtype] = contextvars.ContextVar("transformer_contributions", default=torch.float64)


def exact() -> torch.dtype:
    """The dtype contributions are computed in: float64 (computed_in changes it for a scope)."""
    return _EXACT.get()


@contextlib.contextmanager
def computed_in(dtype: torch.dtype) -> Iterator[None]:
    """Compute contributions and the flow's shares in `dtype` within the scope (per thread and task). float64 keeps
    ALTI's sums exact; a graph traced for a runtime whose float64 kernels are slow (ONNX Runtime Web's take twenty
    times float32's) computes in float32, within 1e-5 of it on our models (attention_lab/page_copy/readings.py)."""
    token = _EXACT.set(dtype)
    try:
        yield
    finally:
        _EXACT.reset(token)


@dataclass
class Contributions:
    """Per step (row t - 1 is step t, 1-based), each source token's and each decoder input's contribution to the
    prediction; step t reads the decoder inputs 0..t-1 (the start token, then the tokens written before)."""

    source: torch.Tensor  # (T, S)
    prefix: torch.Tensor  # (T, T), zero above the diagonal

    @property
    def source_share(self) -> torch.Tensor:
        """(T,): the source's share of each step's prediction (the prefix has the rest)."""
        return self.source.sum(dim=-1)


@dataclass
class Sublayer:
    """One attention sublayer's call, as the contributions of each key to each query are read from it: the
    sublayer writes norm(residual + sum_j parts[:, :, j] + bias), or residual + sum_j parts[:, :, j] + bias when
    its norm comes first (pre-LN: norm None here; the values were read from the normed input)."""

    weights: torch.Tensor | None = None  # (B, H, T, S), ablated heads' set to 0
    values: torch.Tensor | None = None  # (B, H, S, K)
    w_o: torch.Tensor | None = None  # (D, H * K)
    b_o: torch.Tensor | None = None  # (D,) or None
    residual: torch.Tensor | None = None  # (B, T, D)
    norm: nn.Module | None = None  # a LayerNorm after the residual sum (post-LN), None before (pre-LN)
    first: int | torch.Tensor = 0  # the position of its first query row (window: a later window of the queries)

    def window(self, first: int | torch.Tensor) -> Sublayer:
        """The same call's query rows from `first` on (a 0-d tensor in a traced graph): a longer decoding's new rows
        read the same keys, and the rows before them are what a shorter decoding read (the decoder is causal)."""
        weights, residual = self.weights[:, :, first:], self.residual[:, first:]
        return replace(self, weights=weights, residual=residual, first=self.first + first)

    def own_keys(self) -> torch.Tensor:
        """(Q,): each query row's own key (self-attention: its position)."""
        return torch.arange(self.weights.size(2), device=self.weights.device) + self.first

    def parts(self) -> torch.Tensor:
        """(B, T, S, D): what key j adds to query i's output, every head's a_ij^h v_j^h W_o^h summed."""
        H, K = self.values.size(1), self.values.size(3)
        by_head = self.w_o.view(self.w_o.size(0), H, K)
        moved = torch.einsum("bhsk,dhk->bhsd", self.values.to(by_head), by_head)  # (B, H, S, D)
        return torch.einsum("bhts,bhsd->btsd", self.weights.to(moved), moved)


@dataclass
class Mixing:
    """What every attention sublayer of one encode and one whole-prefix decode mixed: (kind, layer) -> Sublayer,
    filled by the calls made while `reading` holds its hooks."""

    sublayers: dict[tuple[str, int], Sublayer] = field(default_factory=dict)

    @contextlib.contextmanager
    def reading(self, model: Seq2SeqModel, ablated: frozenset[Head] = frozenset()) -> Iterator[Mixing]:
        """Hold `hooks(model, ablated)` for the scope."""
        with hooks.using(self.hooks(model, ablated)):
            yield self

    def hooks(self, model: Seq2SeqModel, ablated: frozenset[Head] = frozenset()) -> list[hooks.Hook]:
        """Hooks that read each sublayer's weights (the `ablated` heads' as 0: they add nothing), values and
        residual stream; its output projection and post-norm come from model.sublayer."""
        found = []
        for kind in KINDS:
            residual = "hook_resid_pre" if kind != "cross" else "hook_resid_mid"
            side = "encoder" if kind == "encoder" else "decoder"
            for layer in range(n_layers(model.config, kind)):
                sublayer = self.sublayers.setdefault((kind, layer), Sublayer())
                part = model.sublayer(kind, layer)
                sublayer.w_o, sublayer.norm = part.w_o.detach(), part.norm
                sublayer.b_o = None if part.b_o is None else part.b_o.detach()
                gone = [h.head for h in ablated if h.kind == kind and h.layer == layer]
                found.append((hooks.attention_name(kind, layer, "hook_pattern"), _keep(sublayer, "weights", gone)))
                found.append((hooks.attention_name(kind, layer, "hook_v"), _keep(sublayer, "values")))
                found.append((f"{side}.layers.{layer}.{residual}", _keep(sublayer, "residual")))
        return found


def _keep(sublayer: Sublayer, name: str, ablated: list[int] = ()):
    """A hook that keeps what it sees as `sublayer`.name, with the `ablated` heads (of dim 1) set to 0."""

    def keep(x: torch.Tensor, at: hooks.At) -> None:
        x = x.detach()
        if ablated:
            x = x.clone()
            x[:, ablated] = 0.0
        setattr(sublayer, name, x)

    return keep


def closeness(terms: torch.Tensor) -> torch.Tensor:
    """ALTI's contributions of terms (..., N, D) to their sum: max(0, ||y||_1 - ||y - t_j||_1) over j, normalised
    to add up to 1 -> (..., N)."""
    whole = terms.sum(dim=-2, keepdim=True)
    near = (whole.abs().sum(dim=-1) - (whole - terms).abs().sum(dim=-1)).clamp(min=0)
    return near / near.sum(dim=-1, keepdim=True).clamp(min=torch.finfo(near.dtype).tiny)


def through_norm(terms: torch.Tensor, whole: torch.Tensor, norm: nn.Module | None) -> torch.Tensor:
    """Terms (T, N, D) as a LayerNorm after their sum passes them on, its scale fixed by what it received, `whole`
    (T, D): gamma * (t - mean(t)) / sigma(whole). A pre-LN sublayer (norm None) passes them as they are."""
    if norm is None:
        return terms
    if not isinstance(norm, nn.LayerNorm):
        raise TypeError(f"contributions read a LayerNorm after the residual sum, not {type(norm).__name__}")
    sigma = (whole.var(dim=-1, unbiased=False) + norm.eps).sqrt()  # (T,)
    gamma = torch.ones_like(whole[0]) if norm.weight is None else norm.weight.detach().to(whole)
    return (terms - terms.mean(dim=-1, keepdim=True)) * gamma / sigma[:, None, None]


def sublayer_contributions(sublayer: Sublayer, cross: bool) -> torch.Tensor:
    """One sublayer's contributions (batch row 0): self-attention (T, T); cross-attention (T, 1 + S), the residual
    (the prefix) first, then each source position."""
    if sublayer.weights is None or sublayer.residual is None:
        raise ValueError("the model did not fill every attention sublayer's mixing record")
    parts = sublayer.parts()[0].to(exact())  # (T, S, D)
    residual = sublayer.residual[0].to(exact())  # (T, D)
    whole = residual + parts.sum(dim=1)
    if sublayer.b_o is not None:
        whole = whole + sublayer.b_o.to(exact())
    if cross:
        terms = torch.cat([residual[:, None], parts], dim=1)
    else:
        terms = parts.clone()
        own = torch.arange(terms.size(0), device=terms.device)
        terms[own, sublayer.own_keys()] += residual  # the residual stream joins the query's own term
    return closeness(through_norm(terms, whole, sublayer.norm))


def alti_plus(
    model: Seq2SeqModel, src_ids: list[int], tokens: list[int], interventions: Interventions | None = None
) -> Contributions:
    """ALTI+ for a decoding of `src_ids` that wrote `tokens` (the end token included, if written), with the
    interventions it held: per step, the contributions of each source token and each decoder input."""
    one_run(interventions, "contributions")
    mixing = Mixing()
    ablated = interventions.ablate if interventions is not None else frozenset()
    with torch.no_grad():
        run_with_cache(model, src_ids, tokens, interventions=interventions, hooks=mixing.hooks(model, ablated))
    found = alti_of(model, mixing)
    return Contributions(found.source.float().cpu(), found.prefix.float().cpu())


def alti_of(model: Seq2SeqModel, mixing: Mixing) -> Contributions:
    """ALTI+ from what one teacher-forced pass mixed (its Mixing hooks held), in float64 (`exact`) on the model's
    device."""
    first = mixing.sublayers[("encoder", 0)].weights
    S, T = first.size(-1), mixing.sublayers[("cross", 0)].weights.size(-2)
    rows = eye(S, first)
    for layer in range(n_layers(model.config, "encoder")):
        rows = sublayer_contributions(mixing.sublayers[("encoder", layer)], cross=False) @ rows
    from_source = torch.cat([rows, rows.new_zeros(S, T)], dim=1)  # each encoder output over [source | prefix]
    state = torch.cat([rows.new_zeros(T, S), eye(T, rows)], dim=1)
    for layer in range(n_layers(model.config, "decoder_self")):
        state = sublayer_contributions(mixing.sublayers[("decoder_self", layer)], cross=False) @ state
        cross = sublayer_contributions(mixing.sublayers[("cross", layer)], cross=True)
        state = cross[:, :1] * state + cross[:, 1:] @ from_source
    return Contributions(state[:, :S], state[:, S:])


def eye(n, like: torch.Tensor) -> torch.Tensor:
    """The (n, n) identity in `exact()` on `like`'s device, made so that a traced graph keeps n as its input's size."""
    at = torch.arange(n, device=like.device)
    return (at[:, None] == at[None, :]).to(exact())
