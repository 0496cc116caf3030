"""Any translation scored by the model that reads its source: its tokens forced on the decoder one step at a time,
as decoding steps (through the KV cache, under the model's own next-token rules: transformer.decoding's
next_token_logits), so that forcing the model's own greedy output gives decoding's own probabilities.

Per step: log p of the forced token (-inf where the rules forbid it there), the cross-attention (each decoder layer's,
mean over heads), and a value per source token and per decoder input by `method`: "alti" (ALTI+, Ferrando et al. 2022:
contributions that are non-negative and add up to 1) or one of attention_lab.why.attribution's METHODS. The source
share of a step is the source's part of the total (for the attribution methods, of the absolute values).

The sentence scores (Guerreiro et al. 2023's Seq-Logprob, Dale et al. 2023's source contribution, coverage by
cross-attention, and Guerreiro et al. 2023's Wass-to-Unif, Wass-to-Data and Wass-Combo from each decoder layer's source
attention mass: attention_lab.trust.wasserstein) and the flags (attention_lab.trust.flags) come with it. `score` is plain Python over a pipeline,
importable without gradio, for a benchmark that scores many sentences.
"""

from __future__ import annotations

import math

import numpy as np
import torch

from transformer import Interventions, Seq2SeqModel, Seq2SeqPipeline, run_with_cache
from transformer.contributions import alti_plus
from transformer.decoding import next_token_logits

from ..attribution.methods import attribute, source_share
from ..core.units import source_words
from .flags import find_flags
from .reference import reference_for
from .sentence import Score, StepScore
from .wasserstein import source_mass

ALTI = "alti"


@torch.no_grad()
def forced(
    model: Seq2SeqModel, src_ids: list[int], tokens: list[int], limit: int, interventions: Interventions | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """`tokens` forced one step at a time, as DecodingSession.step decodes: log p of each (T,), under the rules
    for a decoding of at most `limit` steps, and the cross-attention (T, L, S) of each decoder layer, mean over heads."""
    names = [f"decoder.layers.{layer}.cross_attn.hook_pattern" for layer in range(model.config.n_decoder_layers)]
    run = run_with_cache(model, src_ids, tokens, names, interventions, stepwise=True)
    logps = next_token_logits(model, run.hidden[0], None, limit).log_softmax(dim=-1)
    logps = logps.gather(-1, torch.tensor(tokens, device=logps.device)[:, None])[:, 0]  # (T,)
    cross = [torch.stack([step[name][0, :, -1] for name in names]).float().mean(dim=1) for step in run.steps]
    return logps.double().cpu().numpy(), torch.stack(cross).cpu().numpy().astype(np.float64)  # (T,), (T, L, S)


def values(
    model: Seq2SeqModel,
    src_ids: list[int],
    tokens: list[int],
    method: str,
    allowed: list[bool],
    limit: int,
    interventions: Interventions | None = None,
) -> list[tuple[np.ndarray, np.ndarray, float]]:
    """Per step: (a value per source token, a value per decoder input, the source share) by `method`. The
    attribution methods skip the steps whose token is not `allowed` (nothing to differentiate: nan there)."""
    T, S = len(tokens), len(src_ids)
    if method == ALTI:
        c = alti_plus(model, src_ids, tokens, interventions=interventions)
        source, prefix = c.source.double().cpu().numpy(), c.prefix.double().cpu().numpy()
        return [(source[t], prefix[t, : t + 1], source_share(source[t], prefix[t, : t + 1])) for t in range(T)]
    steps = [t + 1 for t in range(T) if allowed[t]]
    found = {}
    if steps:  # attribute() reads no steps as every step
        attributed = attribute(model, src_ids, tokens, method, steps, limit, interventions)
        found = {a.step: (a.source, a.prefix, a.source_share) for a in attributed}
    missing = (np.full(S, np.nan), np.full(0, np.nan), float("nan"))
    return [found.get(t + 1, (missing[0], np.full(t + 1, np.nan), missing[2])) for t in range(T)]


def score(
    pipeline: Seq2SeqPipeline,
    src_ids: list[int],
    tokens: list[int],
    method: str = ALTI,
    limit: int | None = None,
    interventions: Interventions | None = None,
) -> Score:
    """`tokens` (the end token last) forced after the source `src_ids` and scored by `method` ("alti" or a key of
    attention_lab.why.attribution.METHODS), under the rules of a decoding of at most `limit` steps (the model's
    own by default), with its sentence scores and flags."""
    model = pipeline.model
    limit = limit or model.config.max_new_tokens
    logps, layers = forced(model, src_ids, tokens, limit, interventions)
    cross = layers.mean(axis=1)  # (T, S): mean over layers, as coverage and the flags read it
    allowed = [math.isfinite(v) for v in logps]
    per_step = values(model, src_ids, tokens, method, allowed, limit, interventions)
    steps = [
        StepScore(t + 1, token, float(logps[t]), share, source, prefix)
        for t, (token, (source, prefix, share)) in enumerate(zip(tokens, per_step))
    ]
    groups = source_words(pipeline, src_ids)
    reads = np.array([cross[:, group].sum() for group in groups])
    mass = source_mass(layers)
    result = Score(list(src_ids), list(tokens), method, steps, cross, groups, reads, mass, reference_for(pipeline))
    result.flags = find_flags(pipeline, result)
    return result
