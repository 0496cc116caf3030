"""Every head summarised over a decoding: how spread its attention is, how much of it goes to special tokens, and,
where a gold alignment is known, how often a cross head's largest weight is on the right source token."""

from __future__ import annotations

import numpy as np

from transformer import DecodingSession, Seq2SeqModel
from transformer.config import KINDS, n_layers

from ..models.alignments import gold_alignment


def entropy(rows: np.ndarray) -> np.ndarray:
    """Entropy in nats of each distribution along the last axis (0 log 0 = 0)."""
    logs = np.log(np.where(rows > 0, rows, 1.0))
    return -(rows * logs).sum(axis=-1)


def special_positions(ids: list[int], model: Seq2SeqModel) -> np.ndarray:
    """True at markers that are not text: pad, the decoder's start token, eos, and a transformers model's other
    special tokens (BART's <s>, mBART's and NLLB's language codes)."""
    return np.isin(np.array(ids), sorted(model.special_ids))


def head_summaries(session: DecodingSession, alignment: str | None = None) -> dict:
    """{kind: [layer][head] -> {"entropy", "special", "alignment"}} over what the session recorded.

    entropy: the mean over queries of each row's entropy (nats); the queries are every source position for the
    encoder, and every decoded step for decoder self and cross. special: the mean weight on the model's special tokens
    (its special_ids: pad, start and end, and a tokenizer's own such as a language code; not <unk>, which stands
    for a real word), the tokens "Hide special tokens" hides.
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
