"""From looking to testing: per-head summaries, head ablation and attention editing, as requests to transformer's
Interventions. Nothing here computes attention: every number comes from the library's own forward pass.

Heads are written "kind:layer:head", 1-based, kind one of encoder, decoder_self, cross, and "*" for every layer or
every head ("cross:2:*"). In the library they are 0-based `Head`s.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np
import torch

from transformer import CrossEdit, DecodingSession, Head, Interventions, Transformer
from transformer.decoding import next_token_logits
from transformer.interventions import KINDS, n_layers

from .checks import InputError, quoted

KIND_NAMES = {"encoder": "encoder self", "decoder_self": "decoder self", "cross": "cross"}
ALIGNMENTS = ("reversal",)  # the gold alignments the lab knows, named in a model card's `gold_alignment`


# Naming heads ---------------------------------------------------------------------------------------------------------


def head_name(head: Head) -> str:
    """A head as the API writes it: "cross:2:3" (1-based)."""
    return f"{head.kind}:{head.layer + 1}:{head.head + 1}"


def head_label(head: Head) -> str:
    """A head as the page shows it: "Cross · Layer 2 · Head 3"."""
    return f"{KIND_NAMES[head.kind].capitalize()} · Layer {head.layer + 1} · Head {head.head + 1}"


def all_heads(config, kinds=KINDS) -> list[Head]:
    """Every head of the model, kinds in KINDS order, then layers and heads in model order."""
    return [Head(k, layer, h) for k in kinds for layer in range(n_layers(config, k)) for h in range(config.n_heads)]


def parse_heads(specs: object, config, kinds=KINDS) -> frozenset[Head]:
    """ "kind:layer:head" strings (1-based, "*" for all) -> Heads; InputError naming the first one that is wrong."""
    if specs is None:
        specs = []
    if isinstance(specs, str):
        specs = [specs]
    if not isinstance(specs, (list, tuple)):
        raise InputError(f'Heads must be a list of "kind:layer:head" strings (got {quoted(specs)}).')
    heads = set()
    for spec in specs:
        found = re.fullmatch(r"\s*(\w+)\s*:\s*(\*|\d+)\s*:\s*(\*|\d+)\s*", str(spec))
        if not found:
            raise InputError(
                f'A head is written "kind:layer:head", such as "cross:2:3" or "cross:2:*" (got {quoted(spec)}).'
            )
        kind, layer, head = found.groups()
        if kind not in kinds:
            raise InputError(f"Unknown kind {quoted(kind)} in {quoted(spec)}: use {', '.join(kinds)}.")
        layers = _indices("layer", layer, n_layers(config, kind), spec)
        for lay in layers:
            heads.update(Head(kind, lay, h) for h in _indices("head", head, config.n_heads, spec))
    return frozenset(heads)


def _indices(name: str, value: str, size: int, spec: object) -> list[int]:
    if value == "*":
        return list(range(size))
    if not 1 <= int(value) <= size:
        raise InputError(f"No {name} {int(value)} in {quoted(spec)}: this model's {name}s are 1 to {size}.")
    return [int(value) - 1]


# Summaries ------------------------------------------------------------------------------------------------------------


def entropy(rows: np.ndarray) -> np.ndarray:
    """Entropy in nats of each distribution along the last axis (0 log 0 = 0)."""
    logs = np.log(np.where(rows > 0, rows, 1.0))
    return -(rows * logs).sum(axis=-1)


def special_positions(ids: list[int], model) -> np.ndarray:
    """True at markers that are not text: pad, the decoder's start token, eos, and a transformers model's other
    special tokens (BART's <s>, mBART's and NLLB's language codes)."""
    return np.isin(np.array(ids), sorted(model.special_ids))


def gold_alignment(alignment: str | None, n_source: int) -> list[tuple[int, int]]:
    """(step, source position) pairs, 0-based, that a perfectly aligned cross head looks at; [] when none is known.

    reversal: output i reads source n - i + 1 (1-based, n characters before </s>), for the n characters only. Steps
    the decoding never reached (it stopped early) are in the list too: they count as misses.
    """
    if alignment == "reversal":
        n = n_source - 1
        return [(i, n - 1 - i) for i in range(n)]
    return []


def head_summaries(session: DecodingSession, alignment: str | None = None) -> dict:
    """{kind: [layer][head] -> {"entropy", "special", "alignment"}} over what the session recorded.

    entropy: the mean over queries of each row's entropy (nats); the queries are every source position for the
    encoder, and every decoded step for decoder self and cross. special: the mean weight on <s>, </s> and <pad> (not
    <unk>, which stands for a real word).
    alignment: for cross heads, the share of the gold pairs where the head's largest weight is on the gold source
    position; None where no gold alignment is known.
    """
    config = session.model.config
    steps = session.steps
    inputs = [config.bos_id] + [s.token for s in steps[:-1]]  # decoder self-attention's keys
    rows = {
        "encoder": [w.numpy() for w in session.encoder_attention],  # (H, S, S) per layer
        "cross": [
            np.stack([s.cross_attention[layer].numpy() for s in steps], axis=1)
            for layer in range(n_layers(config, "cross"))
        ]
        if steps
        else [],
    }
    src_special = special_positions(session.src_ids, session.model)
    tgt_special = special_positions(inputs, session.model)
    gold = gold_alignment(alignment, len(session.src_ids))
    out = {}
    for kind in KINDS:
        grid = []
        for layer in range(n_layers(config, kind)):
            if kind == "decoder_self":
                per_step = [s.self_attention[layer].numpy() for s in steps]  # (H, t) at step t
                ent = np.mean([entropy(r) for r in per_step], axis=0) if steps else np.full(config.n_heads, np.nan)
                spec = np.mean([r[:, tgt_special[: r.shape[1]]].sum(-1) for r in per_step], axis=0) if steps else ent
                aligned = [None] * config.n_heads
            else:
                weights = rows[kind][layer] if rows[kind] else np.zeros((config.n_heads, 0, len(session.src_ids)))
                ent = entropy(weights).mean(axis=-1) if weights.shape[1] else np.full(config.n_heads, np.nan)
                spec = weights[..., src_special].sum(-1).mean(axis=-1) if weights.shape[1] else ent
                aligned = [None] * config.n_heads
                if kind == "cross" and gold:
                    picks = weights.argmax(axis=-1)  # (H, steps)
                    hits = [[i < picks.shape[1] and picks[h, i] == j for i, j in gold] for h in range(config.n_heads)]
                    aligned = [float(np.mean(row)) for row in hits]
            grid.append(
                [
                    {"entropy": _number(ent[h]), "special": _number(spec[h]), "alignment": aligned[h]}
                    for h in range(config.n_heads)
                ]
            )
        out[kind] = grid
    return out


def _number(value: float) -> float | None:
    return None if np.isnan(value) else round(float(value), 6)


def first_difference(before: list, after: list) -> int:
    """The first step (1-based) where two decodings took different tokens; 1 if they never do."""
    for i, (a, b) in enumerate(zip(before, after)):
        if a.token != b.token:
            return i + 1
    return 1 if len(before) == len(after) else min(len(before), len(after)) + 1


def describe_heads(heads, config) -> str:
    """Heads in words, grouped: "all cross-attention heads; encoder self layer 1 (all heads); decoder self layer 2
    heads 1, 3"."""
    parts = []
    for kind in KINDS:
        layers: dict[int, list[int]] = {}
        for h in sorted(h for h in heads if h.kind == kind):
            layers.setdefault(h.layer, []).append(h.head + 1)
        full = [layer for layer, numbers in layers.items() if len(numbers) == config.n_heads]
        if len(full) == n_layers(config, kind):
            parts.append(f"all {KIND_NAMES[kind]}-attention heads")
            continue
        for layer, numbers in layers.items():
            which = (
                "(all heads)"
                if layer in full
                else ("head " if len(numbers) == 1 else "heads ") + ", ".join(map(str, numbers))
            )
            parts.append(f"{KIND_NAMES[kind]} layer {layer + 1} {which}")
    return "; ".join(parts)


# Ablation -------------------------------------------------------------------------------------------------------------


@dataclass
class StepEffect:
    """What ablating changed at one step of the original decoding, with the original prefix."""

    step: int  # 1-based
    token: int  # the original token
    kl: float  # KL(original || ablated) of the next-token distribution, nats
    top_ids: list[int]  # the ablated distribution's top k
    top_probs: list[float]

    @property
    def changed(self) -> bool:
        return self.top_ids[0] != self.token


@torch.no_grad()
def next_token_log_probs(
    model: Transformer,
    src_ids: list[int],
    tokens: list[int],
    interventions=None,
    batch: int = 1,
    limit: int | None = None,
) -> torch.Tensor:
    """(batch, steps, V) next-token log-probabilities along `tokens`, teacher-forced: step t sees bos and tokens[:t];
    the batch repeats the sentence (for Interventions.rows). `limit` is the decoding's length limit (a model may
    force its last token)."""
    device = next(model.parameters()).device
    src = torch.tensor([src_ids], device=device).expand(batch, -1)
    tgt = torch.tensor([[model.config.bos_id, *tokens[:-1]]], device=device).expand(batch, -1)
    enc = model.encode(src, interventions=interventions)
    dec = model.decode(tgt, enc.memory, enc.src_mask, interventions=interventions)
    return next_token_logits(model, dec.hidden, None, limit).log_softmax(dim=-1).cpu()


def kl_divergence(log_p: torch.Tensor, log_q: torch.Tensor) -> torch.Tensor:
    """KL(p || q) along the last axis, in nats, from log-probabilities; 0 log 0 = 0 (pad and bos are -inf in both)."""
    p = log_p.exp()
    terms = torch.where(p > 0, p * (log_p - log_q), torch.zeros_like(p))
    return terms.sum(dim=-1)


def ablation_effects(
    model, src_ids: list[int], tokens: list[int], heads: frozenset[Head], top_k: int, limit: int | None = None
) -> list[StepEffect]:
    """Per step of the original decoding `tokens` (of a decoding limited to `limit` steps): KL(original || ablated),
    and the ablated top k."""
    if not tokens:
        return []
    original = next_token_log_probs(model, src_ids, tokens, limit=limit)[0]
    ablated = original
    if heads:
        ablated = next_token_log_probs(model, src_ids, tokens, Interventions(ablate=heads), limit=limit)[0]
    kl = kl_divergence(original, ablated)
    top_logs, top_ids = ablated.topk(min(top_k, ablated.size(-1)), dim=-1)
    top_probs = top_logs.exp()
    return [
        StepEffect(t + 1, tokens[t], float(kl[t]), top_ids[t].tolist(), top_probs[t].tolist())
        for t in range(len(tokens))
    ]


LOGITS_BUDGET = 2**26  # floats of next-token log-probabilities that one batched ablation pass may hold


def importance(model, src_ids: list[int], tokens: list[int], limit: int | None = None) -> dict[str, np.ndarray]:
    """{kind: (L, H)} the mean KL over the decoding's steps (teacher-forced along `tokens`) when that head alone is
    ablated. Every head is tested in one batched pass, a batch row per head."""
    config = model.config
    grids = {k: np.zeros((n_layers(config, k), config.n_heads)) for k in KINDS}
    if not tokens:
        return grids
    heads = all_heads(config)
    original = next_token_log_probs(model, src_ids, tokens, limit=limit)[0]
    # Rows in chunks, so that a large vocabulary (opus-mt's 58k) keeps the batch's logits under about 256 MB.
    chunk = max(1, LOGITS_BUDGET // (len(tokens) * config.tgt_vocab_size))
    for start in range(0, len(heads), chunk):
        part = heads[start : start + chunk]
        each = Interventions(rows=tuple(frozenset({h}) for h in part))
        ablated = next_token_log_probs(model, src_ids, tokens, each, batch=len(part), limit=limit)
        for head, value in zip(part, kl_divergence(original, ablated).mean(dim=-1).tolist()):
            grids[head.kind][head.layer, head.head] = value
    return grids


def ablated_session(session: DecodingSession, heads: frozenset[Head]) -> DecodingSession:
    """The session's source and options decoded greedily to the end with `heads` ablated throughout."""
    ablated = _fresh(session, Interventions(ablate=heads))
    ablated.run()
    return ablated


def _fresh(session: DecodingSession, interventions: Interventions) -> DecodingSession:
    """A new session over the same source, with the same options, holding `interventions`."""
    return DecodingSession(session.model, session.src_ids, session.top_k, session.max_new_tokens, interventions)


# Editing --------------------------------------------------------------------------------------------------------------


def edit_session(session: DecodingSession, step: int, weights: torch.Tensor, heads: frozenset[Head]) -> DecodingSession:
    """A new session that takes the session's first step - 1 tokens, then at `step` points the listed cross heads at
    `weights` (S,), and decodes on greedily with no further edits. Ablations of `session` stay held, and so do its
    edits of earlier steps (they made the prefix); its edits of this step or later are dropped."""
    by_layer: dict[int, list[int]] = {}
    for head in sorted(heads, key=lambda h: (h.layer, h.head)):
        by_layer.setdefault(head.layer, []).append(head.head)
    edits = tuple(CrossEdit(layer, tuple(hs), step, weights) for layer, hs in by_layer.items())
    held = session.interventions or Interventions()
    earlier = tuple(e for e in held.edits if e.step < step)
    edited = _fresh(session, Interventions(ablate=held.ablate, edits=earlier + edits))
    for kept in session.steps[: step - 1]:
        edited.step(force=kept.token)
    edited.step()
    edited.run()
    return edited


def point_weights(n_source: int, positions: list[int]) -> torch.Tensor:
    """Weight spread evenly over `positions` (0-based; one position: weight 1 there), 0 elsewhere."""
    weights = torch.zeros(n_source)
    weights[positions] = 1.0 / len(positions)
    return weights
