"""Ablation: heads removed from the real forward pass (transformer.Interventions), and what that changes in the
next-token distribution at every step of a decoding, teacher-forced along its tokens."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from transformer import DecodingSession, Head, Interventions, Seq2SeqModel, run_with_cache
from transformer.config import KINDS, n_layers
from transformer.contract import EncoderOutput
from transformer.decoding import next_token_logits
from transformer.next_token import kl_divergence

from ..core.naming import all_heads


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
    model: Seq2SeqModel,
    src_ids: list[int],
    tokens: list[int],
    interventions=None,
    batch: int = 1,
    limit: int | None = None,
) -> torch.Tensor:
    """(batch, steps, V) next-token log-probabilities along `tokens`, teacher-forced: step t sees bos and tokens[:t];
    the batch repeats the sentence (for Interventions.rows). `limit` is the decoding's length limit (a model may
    force its last token)."""
    src = torch.tensor([src_ids], device=next(model.parameters()).device).expand(batch, -1)
    hidden = run_with_cache(model, src, tokens, interventions=interventions).hidden
    return next_token_logits(model, hidden, None, limit).log_softmax(dim=-1).cpu()


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


@torch.no_grad()
def importance(model, src_ids: list[int], tokens: list[int], limit: int | None = None) -> dict[str, np.ndarray]:
    """{kind: (L, H)} the mean KL over the decoding's steps (teacher-forced along `tokens`) when that head alone is
    ablated. Every head is tested in one batched pass, a batch row per head. The encoder runs once per encoder it can
    give (the plain one, and one per encoder head ablated): a decoder head's ablation reads the plain one."""
    config = model.config
    grids = {k: np.zeros((n_layers(config, k), config.n_heads)) for k in KINDS}
    if not tokens:
        return grids
    heads, device = all_heads(config), next(model.parameters()).device
    encoders = {h: 1 + i for i, h in enumerate(h for h in heads if h.kind == "encoder")}  # 0: the plain encoder
    src = torch.tensor([src_ids], device=device).expand(1 + len(encoders), -1)
    per_encoder = Interventions(rows=(frozenset(), *(frozenset({h}) for h in encoders)))
    encoded = run_with_cache(model, src, None, interventions=per_encoder).encoded  # the encoders alone

    def log_probs(part: list[Head | None]) -> torch.Tensor:
        """(rows, steps, V): a row per head of `part` ablated alone (None: nothing ablated)."""
        index = torch.tensor([encoders.get(h, 0) for h in part], device=device)
        rows = tuple(frozenset() if h is None or h in encoders else frozenset({h}) for h in part)
        memory, mask = encoded.memory.index_select(0, index), encoded.src_mask.index_select(0, index)
        run = run_with_cache(model, EncoderOutput(memory, mask, ()), tokens, interventions=Interventions(rows=rows))
        return next_token_logits(model, run.hidden, None, limit).log_softmax(dim=-1).cpu()

    original = log_probs([None])[0]
    # Rows in chunks, so that a large vocabulary (opus-mt's 58k) keeps the batch's logits under about 256 MB.
    chunk = max(1, LOGITS_BUDGET // (len(tokens) * config.tgt_vocab_size))
    for start in range(0, len(heads), chunk):
        part = heads[start : start + chunk]
        for head, value in zip(part, kl_divergence(original, log_probs(part)).mean(dim=-1).tolist()):
            grids[head.kind][head.layer, head.head] = value
    return grids


def ablated_session(session: DecodingSession, heads: frozenset[Head]) -> DecodingSession:
    """The session's source and options decoded greedily to the end with `heads` ablated throughout."""
    ablated = fresh(session, Interventions(ablate=heads))
    ablated.run()
    return ablated


def fresh(session: DecodingSession, interventions: Interventions) -> DecodingSession:
    """A new session over the same source, with the same options, holding `interventions`."""
    return DecodingSession(session.model, session.src_ids, session.top_k, session.max_new_tokens, interventions)
