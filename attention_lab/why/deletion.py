"""Which to trust: a deletion test of rankings of the source tokens.

At every step of a greedy decoding, each ranking orders the source tokens (special tokens left out) by how much it
says the written token depends on them; the 1, 2 and 3 tokens it puts first are removed (their embeddings zeroed,
their positions kept, as occlusion does) and the fall in the written token's probability is measured, the prefix
unchanged. A ranking that knows what the output depends on makes it fall more. Compared: attention (the mean of
every cross head, and the best single cross head, chosen on the same sentences: an upper bound for any one head),
each attribution method with each aggregation over the embedding (highest value first: signed for "sum", unsigned
for "L2"), and a random order (DeYoung et al. 2020's comprehensiveness, and the
deletion tests of Jain & Wallace 2019 and Serrano & Smith 2019, here for an encoder-decoder).

Occlusion's values are the fall when one token is removed, so its lead at 1 token, summed (signed), is by
construction; at 2 and 3 tokens it is tested like the others.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass, field

import numpy as np
import torch

from transformer import DecodingSession, Seq2SeqPipeline

from ..attribution.methods import AGGREGATE_TITLES, AGGREGATES, METHODS, Scorer, aggregated, per_dimension

REMOVED = (1, 2, 3)
MEAN, BEST, RANDOM = "attention, mean of cross heads", "attention, best cross head", "random"


def ranking_title(method: str, aggregate: str) -> str:
    """A method × aggregation row's name in the table, such as "Input × gradient, L2"."""
    return f"{METHODS[method].title}, {AGGREGATE_TITLES[aggregate]}"


def _values(scorer: Scorer, step: int, ig_steps: int) -> dict[str, object]:
    """Every method × aggregation's source values at `step`, keyed "method:aggregate"; Captum runs once a method."""
    values = {}
    for method in METHODS:
        parts, _ = per_dimension(scorer, step, method, ig_steps)
        for aggregate in AGGREGATES:
            values[f"{method}:{aggregate}"] = aggregated(parts, method, aggregate)[0]
    return values


@dataclass
class DeletionTable:
    """Per ranking, the mean fall in the written token's probability (0-1) with its top 1, 2 and 3 removed."""

    falls: dict[str, list[float]]
    steps: int  # the steps measured
    sentences: int
    best_head: tuple[int, int] | None = None  # (layer, head), 1-based: the cross head whose ranking fell most at 1
    per_head: dict[tuple[int, int], list[float]] = field(default_factory=dict)

    def lines(self) -> list[str]:
        """The table in Markdown."""
        head = f" ({self.best_head[0]}.{self.best_head[1]})" if self.best_head else ""
        rows = [
            "| ranking | " + " | ".join(f"top {k} removed" for k in REMOVED) + " |",
            "|---|" + "---|" * len(REMOVED),
        ]
        for name, falls in self.falls.items():
            label = name + head if name == BEST else name
            rows.append(f"| {label} | " + " | ".join(f"{100 * f:.1f} pp" for f in falls) + " |")
        return rows


def _rankings(session: DecodingSession, step: int, values: dict[str, np.ndarray], rng: random.Random) -> dict:
    """Ranking name -> source positions, most important first, at step `step` (1-based)."""
    rows = torch.stack(session.steps[step - 1].cross_attention)  # (L, H, S)
    ranked = {MEAN: rows.mean(dim=(0, 1)).numpy()}
    for layer in range(rows.size(0)):
        for head in range(rows.size(1)):
            ranked[(layer + 1, head + 1)] = rows[layer, head].numpy()
    ranked.update(values)
    order = {name: list(np.argsort(-np.asarray(v), kind="stable")) for name, v in ranked.items()}
    order[RANDOM] = rng.sample(range(len(session.src_ids)), len(session.src_ids))
    return order


def sentence_falls(session: DecodingSession, rng: random.Random, ig_steps: int = 50) -> dict[object, list[list[float]]]:
    """For one finished session: ranking -> per step measured, the falls with REMOVED tokens removed."""
    tokens, special = session.tokens, session.model.special_ids
    candidates = {j for j, t in enumerate(session.src_ids) if t not in special}
    scorer = Scorer(session.model, session.src_ids, tokens, session.max_new_tokens, session.interventions)
    falls: dict[object, list[list[float]]] = {}
    if not candidates:
        return falls
    for step in range(1, len(tokens) + 1):
        src, tgt = (part.detach() for part in scorer.inputs(step))
        with torch.no_grad():
            log_p = float(scorer(src, tgt, step)[0])
        if log_p == 0.0:  # a token the model must write: nothing can make it fall
            continue
        p = math.exp(log_p)
        order = _rankings(session, step, _values(scorer, step, ig_steps), rng)
        batch, names = [], []
        for name, ranked in order.items():
            kept = [j for j in ranked if j in candidates]
            for k in REMOVED:
                removed = src.clone()
                removed[0, kept[: min(k, len(kept))]] = 0.0
                batch.append(removed[0])
                names.append(name)
        with torch.no_grad():
            after = scorer(torch.stack(batch), tgt.expand(len(batch), -1, -1), step).exp().tolist()
        for i in range(0, len(after), len(REMOVED)):
            falls.setdefault(names[i], []).append([p - q for q in after[i : i + len(REMOVED)]])
    return falls


def deletion_table(
    pipeline: Seq2SeqPipeline, sources: list[str], seed: int = 0, progress=None, ig_steps: int = 50
) -> DeletionTable:
    """The deletion test over `sources` decoded greedily; `progress` wraps the sources (a tqdm, say)."""
    rng = random.Random(seed)
    pooled: dict[object, list[list[float]]] = {}
    measured = 0
    for text in progress(sources) if progress else sources:
        session = DecodingSession(pipeline.model, pipeline.tokenizer.encode(text))
        session.run()
        for name, rows in sentence_falls(session, rng, ig_steps).items():
            pooled.setdefault(name, []).extend(rows)
        measured += 1
    means = {name: np.mean(rows, axis=0).tolist() for name, rows in pooled.items()}
    heads = {name: v for name, v in means.items() if isinstance(name, tuple)}
    best = max(heads, key=lambda h: heads[h][0]) if heads else None
    falls = {name: means[name] for name in (MEAN,) if name in means}
    if best is not None:
        falls[BEST] = heads[best]
    for method in METHODS:
        for aggregate in AGGREGATES:
            if f"{method}:{aggregate}" in means:
                falls[ranking_title(method, aggregate)] = means[f"{method}:{aggregate}"]
    if RANDOM in means:
        falls[RANDOM] = means[RANDOM]
    steps = len(pooled.get(RANDOM, []))
    return DeletionTable(falls, steps, measured, best, heads)
