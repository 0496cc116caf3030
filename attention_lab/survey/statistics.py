"""Every head's attention over a corpus, as sums that add up across batches and processes: entropy, weight on
special tokens, the offset of the top weight from the query, and, for cross heads, hits on a gold alignment.

The definitions are the head summary's (attention_lab.heads.summaries) pooled over the corpus's queries: the mean over every
query of every sentence. The queries are the real source positions (encoder) and every decoded step, eos included
(decoder self and cross), read from one teacher-forced pass along the plain greedy decoding.

Dimension key: B batch, H heads, S source positions, T decoded steps.
"""

from __future__ import annotations

import numpy as np
import torch

from transformer import Seq2SeqModel, run_with_cache
from transformer.config import KINDS, n_layers
from transformer.forced import decoder_input
from transformer.hooks import attention_name

from ..models.alignments import gold_alignment

SUMS = ("entropy", "special", "offset", "hits")  # per head; "hits" only for cross heads with a gold alignment


def empty_totals(model: Seq2SeqModel) -> dict:
    """{kind: {sum name: (L, H) zeros, "queries": 0}}, and "gold": the gold pairs counted."""
    config = model.config
    totals = {k: {s: np.zeros((n_layers(config, k), config.n_heads)) for s in SUMS} for k in KINDS}
    for kind in KINDS:
        totals[kind]["queries"] = 0.0
    totals["gold"] = 0.0
    return totals


def add_totals(into: dict, more: dict) -> dict:
    for kind in KINDS:
        for name, value in more[kind].items():
            into[kind][name] = into[kind][name] + value
    into["gold"] += more["gold"]
    return into


@torch.no_grad()
def batch_totals(model: Seq2SeqModel, src: torch.Tensor, steps: list[list[int]], alignment: str | None) -> dict:
    """The sums over one batch: src (B, S) padded, and each row's decoded steps (its tokens, eos included)."""
    config, device = model.config, src.device
    T = max(len(s) for s in steps)
    tgt = decoder_input(model, steps, len(steps), device)  # (B, T), padded after each row's steps
    run = run_with_cache(model, src, steps, lambda name: name.endswith(".hook_pattern"))
    weights = {
        k: [run.cache[attention_name(k, layer, "hook_pattern")] for layer in range(n_layers(config, k))] for k in KINDS
    }
    special_ids = torch.tensor(sorted(model.special_ids), device=device)
    src_real = src != config.pad_id  # (B, S)
    lengths = torch.tensor([len(s) for s in steps], device=device)
    tgt_real = torch.arange(T, device=device)[None] < lengths[:, None]  # (B, T)
    keys = {"encoder": torch.isin(src, special_ids), "cross": torch.isin(src, special_ids)}
    keys["decoder_self"] = torch.isin(tgt, special_ids) & tgt_real
    queries = {"encoder": src_real, "decoder_self": tgt_real, "cross": tgt_real}
    gold = [gold_alignment(alignment, int(n)) for n in src_real.sum(dim=1).tolist()]
    aimed = torch.full((len(steps), T), -1, dtype=torch.long)  # (B, T): each step's gold source position, or -1
    for b, pairs in enumerate(gold):
        for step, position in pairs:
            if step < T:  # a step the decoding never reached counts as a miss
                aimed[b, step] = position
    aimed = aimed.to(device) if any(gold) else None
    totals = empty_totals(model)
    for kind in KINDS:
        totals[kind]["queries"] = float(queries[kind].sum())
        for layer, w in enumerate(weights[kind]):
            sums = layer_sums(w.float(), queries[kind], keys[kind], aimed if kind == "cross" else None)
            for name, value in sums.items():
                totals[kind][name][layer] = value
    totals["gold"] = float(sum(len(g) for g in gold))
    return totals


def layer_sums(w: torch.Tensor, real: torch.Tensor, special: torch.Tensor, aimed: torch.Tensor | None) -> dict:
    """One layer's per-head sums over its real queries: w (B, H, Q, K) weights, real (B, Q) the real queries,
    special (B, K) the special keys; aimed (B, Q), for cross heads with a gold alignment, each step's gold source
    position (-1: none)."""
    mask = real[:, None, :].to(w.dtype)  # (B, 1, Q)
    logs = torch.log(torch.where(w > 0, w, torch.ones_like(w)))
    entropy = -(w * logs).sum(dim=-1)  # (B, H, Q)
    on_special = (w * special[:, None, None, :].to(w.dtype)).sum(dim=-1)
    top = w.argmax(dim=-1)  # (B, H, Q)
    offset = top - torch.arange(w.size(2), device=w.device)[None, None, :]
    sums = {
        name: (value.double() * mask).sum(dim=(0, 2)).cpu().numpy()
        for name, value in (("entropy", entropy), ("special", on_special), ("offset", offset))
    }
    hits = np.zeros(w.size(1))
    if aimed is not None:
        hit = (top == aimed[:, None, :]) & (aimed >= 0)[:, None, :] & real[:, None, :]
        hits = hit.sum(dim=(0, 2)).double().cpu().numpy()
    sums["hits"] = hits
    return sums


def head_statistics(totals: dict, model: Seq2SeqModel) -> dict:
    """{kind: [layer][head] -> {"entropy", "special", "offset", "alignment"}}: the means the sums stand for;
    alignment is None where no gold alignment is known (and for every head but cross)."""
    config = model.config
    out = {}
    for kind in KINDS:
        part, n = totals[kind], max(totals[kind]["queries"], 1.0)
        aligned = kind == "cross" and totals["gold"] > 0
        out[kind] = [
            [
                {
                    "entropy": round(float(part["entropy"][layer, h] / n), 6),
                    "special": round(float(part["special"][layer, h] / n), 6),
                    "offset": round(float(part["offset"][layer, h] / n), 6),
                    "alignment": round(float(part["hits"][layer, h] / totals["gold"]), 6) if aligned else None,
                }
                for h in range(config.n_heads)
            ]
            for layer in range(n_layers(config, kind))
        ]
    return out
