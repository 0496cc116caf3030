"""Value zeroing (Mohebbi et al. 2023, "Quantifying Context Mixing in Transformers"): how much a step's prediction
needs one token's value vector.

A token's value vector is what it gives the heads that attend to it: zeroing it (at hook_v, transformer.hooks) in
chosen heads leaves the attention weights as they were, so the heads still look at the token, but whatever they
take from it is nothing. The token's own position, its key and its residual stream are kept. The decoder runs over
the whole prefix in the real forward pass, once per token zeroed (one batch row each, as occlusion does), and at
each step the change is read two ways:

- the fall in log p of the token written there: log p(as decoded) - log p(with the value zeroed); positive means
  the token's value raised the probability of what was written (the next-token rules of decoding are applied, so
  the unzeroed log p is decoding's);
- the change in the output representation: the cosine distance, 1 - cos, between the decoder's final hidden state
  at that step with and without the zeroing (the measure of Mohebbi et al.).

Each source token is zeroed in every cross-attention head of every layer by default, each decoder input before the
step in every decoder self-attention head; `heads` restricts them to chosen heads (encoder heads too: the source
token's value is then zeroed in those encoder heads as well). Each pass also runs one unzeroed row, the reference
the changes are read against, so a zeroing in no head changes nothing, to the bit.

Dimension key: S source positions, T steps (the tokens written, the end token included), V vocabulary.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

import torch

from . import hooks
from .config import n_layers
from .contract import Seq2SeqModel
from .decoding import next_token_logits
from .forced import one_run, run_with_cache
from .interventions import Head, Interventions

LOGITS_BUDGET = 2**25  # next-token logits (rows × steps × V) one pass may hold


@dataclass
class ZeroedStep:
    """At one step, each source token's and each decoder input's value zeroed on its own, and what changed."""

    step: int  # 1-based
    token: int  # the token written there
    log_prob: float  # its log p as decoded, nothing zeroed
    source_fall: torch.Tensor  # (S,): log p(as decoded) - log p(source token j's value zeroed)
    source_distance: torch.Tensor  # (S,): 1 - cos between the final hidden states without and with it
    prefix_fall: torch.Tensor  # (step,): the same for decoder input j (the start token, then the tokens written)
    prefix_distance: torch.Tensor  # (step,)


def every_head(config, kinds: Iterable[str]) -> frozenset[Head]:
    """Every head of the given kinds."""
    return frozenset(
        Head(k, layer, h) for k in kinds for layer in range(n_layers(config, k)) for h in range(config.n_heads)
    )


def zeroing(positions: torch.Tensor, heads: list[int]) -> Callable[[torch.Tensor, hooks.At], torch.Tensor]:
    """A hook at hook_v: in row 1 + i of the batch, the value of key positions[i] zeroed in `heads`; row 0, the
    reference, kept. v (B, H, keys, K)."""

    def zero(v: torch.Tensor, at: hooks.At) -> torch.Tensor:
        # by comparison, not by indexing, so that a traced graph holds it too (attention_lab/page_copy/attribution.py)
        hit = positions.to(v.device)[:, None] == torch.arange(v.size(2), device=v.device)[None, :]  # (B - 1, keys)
        hit = torch.cat([hit.new_zeros((1, hit.size(1))), hit])  # row 0, the reference, keeps every value
        chosen = torch.tensor([h in heads for h in range(v.size(1))], device=v.device)  # (H,)
        keep = ~(hit[:, None, :] & chosen[None, :, None])  # (B, H, keys)
        return v * keep.to(v.dtype)[..., None]

    return zero


def zeroing_hooks(heads: frozenset[Head], kinds: tuple[str, ...], positions: torch.Tensor) -> list[hooks.Hook]:
    """Zeroing hooks for the `heads` of `kinds`, one per layer that has any: row 1 + i of a pass zeroes positions[i]
    (a page copy's attribution graph, attention_lab/page_copy/attribution.py, traces them too)."""
    chosen: dict[tuple[str, int], list[int]] = {}
    for head in sorted(heads):
        if head.kind in kinds:
            chosen.setdefault((head.kind, head.layer), []).append(head.head)
    return [(hooks.attention_name(k, layer, "hook_v"), zeroing(positions, hs)) for (k, layer), hs in chosen.items()]


class _Run:
    """One decoding's source and decoder inputs, and batched passes that zero a token per row."""

    def __init__(
        self,
        model: Seq2SeqModel,
        src_ids: list[int],
        tokens: list[int],
        limit: int,
        interventions: Interventions | None,
    ) -> None:
        device = next(model.parameters()).device
        self.model, self.limit, self.tokens, self.interventions = model, limit, list(tokens), interventions
        self.src = torch.tensor([list(src_ids)], device=device)
        self.written = torch.tensor(self.tokens, device=device)

    def changes(self, positions: torch.Tensor, heads: frozenset[Head], source: bool) -> tuple[torch.Tensor, ...]:
        """Zero each of `positions` (source positions, or decoder input positions) in its own row: the reference's
        log p (T,), and per position the fall (N, T) and the cosine distance (N, T)."""
        T, V = len(self.tokens), self.model.config.tgt_vocab_size
        per_pass = max(1, LOGITS_BUDGET // (T * V) - 1)
        logp, falls, distances = None, [], []
        for first in range(0, len(positions), per_pass):
            part = positions[first : first + per_pass]
            logp, fall, distance = self._pass(part, heads, source)
            falls.append(fall)
            distances.append(distance)
        if logp is None:  # nothing to zero (an empty source cannot be): the reference alone
            logp = self._pass(positions[:0], heads, source)[0]
        return logp, torch.cat(falls), torch.cat(distances)

    @torch.no_grad()
    def _pass(self, positions: torch.Tensor, heads: frozenset[Head], source: bool):
        R = 1 + len(positions)
        kinds = ("encoder", "cross") if source else ("decoder_self",)  # a kind's points fire on its side only
        zeroed = zeroing_hooks(heads, kinds, positions)
        run = run_with_cache(self.model, self.src.expand(R, -1), self.tokens, (), self.interventions, zeroed)
        hidden = run.hidden  # (R, T, D)
        logits = next_token_logits(self.model, hidden, None, self.limit)
        logp = logits.log_softmax(dim=-1).gather(-1, self.written.expand(R, -1)[..., None])[..., 0]  # (R, T)
        # 1 - cos(a, b) = ||a/|a| - b/|b|||^2 / 2: the same, and exactly 0 for equal states (1 - cos rounds)
        unit = hidden / hidden.norm(dim=-1, keepdim=True)
        distance = (unit[1:] - unit[:1]).pow(2).sum(dim=-1) / 2  # (R - 1, T)
        return logp[0], logp[:1] - logp[1:], distance


def value_zeroing(
    model: Seq2SeqModel,
    src_ids: list[int],
    tokens: list[int],
    steps: Iterable[int] | None = None,
    limit: int | None = None,
    interventions: Interventions | None = None,
    heads: Iterable[Head] | None = None,
) -> list[ZeroedStep]:
    """Value zeroing over a decoding of `src_ids` that wrote `tokens` (the end token included, if written), with the
    interventions it held, for the `steps` given (1-based; None: every step). `limit` is the decoding's length limit
    (a model may force its last token; None: the model's). `heads`: where the values are zeroed (None: every cross
    head for the source tokens, every decoder self head for the decoder inputs)."""
    if not tokens:
        raise ValueError("nothing was written: decode a step first")
    one_run(interventions, "value zeroing's changes")
    config = model.config
    chosen = every_head(config, ("cross", "decoder_self")) if heads is None else frozenset(heads)
    Interventions(ablate=chosen).check(config)  # each head is one this model has
    wanted = range(1, len(tokens) + 1) if steps is None else sorted(set(steps))
    if any(not 1 <= t <= len(tokens) for t in wanted):
        raise ValueError(f"steps must be in 1..{len(tokens)} (got {list(wanted)})")
    run = _Run(model, src_ids, tokens, limit or config.max_new_tokens, interventions)
    device = run.src.device
    logp, source_fall, source_distance = run.changes(torch.arange(len(src_ids), device=device), chosen, True)
    _, prefix_fall, prefix_distance = run.changes(torch.arange(len(tokens), device=device), chosen, False)
    found = []
    for t in wanted:
        i = t - 1
        found.append(
            ZeroedStep(
                t,
                tokens[i],
                float(logp[i]),
                source_fall[:, i].float().cpu(),
                source_distance[:, i].float().cpu(),
                prefix_fall[:t, i].float().cpu(),
                prefix_distance[:t, i].float().cpu(),
            )
        )
    return found
