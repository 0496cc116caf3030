"""The three attribution methods Captum computes, on the Scorer's embeddings (attention_lab.attribution.scorer):

- input × gradient: e · ∂ log p / ∂e, summed over the embedding's dimensions;
- integrated gradients: from the baseline of zero embeddings (every position kept, no token's identity) to the real
  ones, 50 Gauss-Legendre steps, summed over dimensions: the values add up to log p(input) - log p(baseline) as the
  steps grow (completeness). At 50 the gap can be a tenth of the change on a trained model, whose log p climbs
  steeply part of the way; Captum's convergence delta says how far it is, and the page shows it;
- occlusion: one token's embedding set to zero, the fall in log p (the token's information removed, its position
  kept).
Each gives Captum's values per embedding dimension, aggregated as AGGREGATES says. Occlusion's value is one number
per token already (the fall, which Captum gives every dimension): "sum" keeps it, "l2" takes its size |fall| (the
norm over the dimensions would be |fall|·√D, which ranks the tokens the same).
"""

from __future__ import annotations

import numpy as np
import torch

from .scorer import IG_STEPS, Method, Parts, Scorer, check_aggregate


def captum_attr():
    """captum.attr, imported when first attributing: it takes about a second, which the app's start and every
    process that never attributes would otherwise pay."""
    import captum.attr

    return captum.attr


def _input_x_gradient(scorer: Scorer, step: int, ig_steps: int = IG_STEPS) -> tuple[Parts, None]:
    inputs = scorer.inputs(step)
    with torch.enable_grad():
        parts = captum_attr().InputXGradient(scorer).attribute(inputs, additional_forward_args=(step,))
    return tuple(part.detach() for part in parts), None


def _integrated_gradients(scorer: Scorer, step: int, ig_steps: int = IG_STEPS) -> tuple[Parts, float]:
    src_embeds, tgt_embeds = inputs = scorer.inputs(step)
    with torch.enable_grad():
        parts, deltas = (
            captum_attr()
            .IntegratedGradients(scorer)
            .attribute(
                inputs,
                baselines=(torch.zeros_like(src_embeds), torch.zeros_like(tgt_embeds)),
                additional_forward_args=(step,),
                n_steps=ig_steps,
                return_convergence_delta=True,
            )
        )
    return tuple(part.detach() for part in parts), float(deltas[0])


def _occlusion(scorer: Scorer, step: int, ig_steps: int = IG_STEPS) -> tuple[Parts, None]:
    src_embeds, tgt_embeds = inputs = scorer.inputs(step)
    D = src_embeds.size(-1)
    with torch.enable_grad():
        parts = (
            captum_attr()
            .Occlusion(scorer)
            .attribute(
                inputs,
                sliding_window_shapes=((1, D), (1, D)),
                strides=((1, D), (1, D)),
                baselines=(0.0, 0.0),
                additional_forward_args=(step,),
                perturbations_per_eval=src_embeds.size(1) + tgt_embeds.size(1),
            )
        )
    return tuple(part.detach() for part in parts), None


def _by_dimension(parts: Parts, aggregate: str) -> tuple[np.ndarray, np.ndarray]:
    """Values per embedding dimension, (1, S, D) and (1, T, D): summed (signed) or their L2 norm."""
    check_aggregate(aggregate)
    reduce = (lambda a: a.sum(dim=-1)) if aggregate == "sum" else (lambda a: a.norm(dim=-1))
    source, prefix = (reduce(part)[0].cpu().numpy().astype(np.float64) for part in parts)
    return source, prefix


def _fall(parts: Parts, aggregate: str) -> tuple[np.ndarray, np.ndarray]:
    """Occlusion's fall, which every dimension holds: itself ("sum"), or its size ("l2")."""
    check_aggregate(aggregate)
    reduce = (lambda a: a.mean(dim=-1)) if aggregate == "sum" else (lambda a: a.mean(dim=-1).abs())
    source, prefix = (reduce(part)[0].cpu().numpy().astype(np.float64) for part in parts)
    return source, prefix


INPUT_X_GRADIENT = Method(
    "Input × gradient",
    "Input × gradient: each token's embedding times the gradient of log p(token written), summed over the "
    "embedding's dimensions; a positive value raised the probability.",
    _input_x_gradient,
    _by_dimension,
)
INTEGRATED_GRADIENTS = Method(
    "Integrated gradients",
    f"Integrated gradients: gradients along the path from zero embeddings (positions kept) to the real ones "
    f"({IG_STEPS} steps), times the input, summed over dimensions; the values add up to the change in log p.",
    _integrated_gradients,
    _by_dimension,
)
OCCLUSION = Method(
    "Occlusion",
    "Occlusion: one token's embedding set to zero (its position kept); the value is how far log p(token written) "
    "falls.",
    _occlusion,
    _fall,
)
