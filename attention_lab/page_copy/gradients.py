"""The gradients graph, one of a page copy's explanations' graphs (analyses.py): the Why tab's two gradient methods
(input × gradient and integrated gradients: attention_lab.attribution.captum) for every step of a decoding at once,
the backward pass included, traced from the library's own pass (transformer.forced.run_with_cache with the
embeddings put in at its hook points, as the server's Scorer puts Captum's in), so that a page attributes with
gradients with ONNX Runtime Web and no server.

    gradients:  source (1, S) ids, tokens (T,) the tokens written (the end token included if written), keep_encoder,
                keep_self and keep_cross (layers, H) the head masks, rules (T, V) the step rules the page applies (as
                the attribution graph's), alphas (K,) and weights (K,) the points of the path from zero embeddings to
                the real ones and their weights (input × gradient: the point 1, weighing 1) ->
                source_parts (T, S, D) and prefix_parts (T, T, D): for step t (row t), each source token's and each
                    decoder input's embedding times the weighted sum over the points of the gradient of step t's log p
                    there (Captum's values per embedding dimension; a decoder input after step t's is 0, as the
                    decoder is causal);
                scores (K, T): step t's log p of its token at each point (integrated gradients' convergence delta
                    reads those at the points 0 and 1)

A row of the pass is a (point, step) pair: the pass runs K·T rows, each scaling every embedding by its point, and
reads its own step's log p, whose gradient is then that row's alone. Integrated gradients' sum over the points is
linear, so the page runs the points in parts (within what a page's memory holds) and adds the parts up; it then
reduces each token's values over the dimensions as the Why tab's aggregate asks (summed, or the L2 norm) and takes
the convergence delta, as attention_lab.attribution does (why/in_page.mjs).

The attention runs its explicit path (a hook at hook_pattern): torch's fused attention has no ONNX form for its
backward pass. The graph is traced by torch.fx (make_fx, with torch's core decompositions and symbolic sizes) into
plain operations, forward and backward, which torch's ONNX exporter (dynamo, through onnxscript) writes with S, T and
K left as dimensions (graphs.differentiated).
"""

from __future__ import annotations

import numpy as np
import torch
from torch import nn

from transformer.config import n_layers
from transformer.contract import Seq2SeqModel
from transformer.forced import decoder_input, run_with_cache
from transformer.hooks import attention_name

from .analyses import Analysis, kept

METHODS = ("input_x_gradient", "integrated_gradients")  # the attribution methods (attention_lab.attribution) it makes
INPUTS = ("source", "tokens", "keep_encoder", "keep_self", "keep_cross", "rules", "alphas", "weights")
OUTPUTS = ("source_parts", "prefix_parts", "scores")
AXES = {
    "source": {1: "S"},
    "tokens": {0: "T"},
    "rules": {0: "T"},
    "alphas": {0: "K"},
    "weights": {0: "K"},
    "source_parts": {0: "T", 1: "S"},
    "prefix_parts": {0: "T", 1: "T"},
    "scores": {0: "K", 1: "T"},
}
KINDS = ("encoder", "decoder_self", "cross")


def integration_points(n: int) -> tuple[list[float], list[float]]:
    """The n Gauss–Legendre points of [0, 1] and their weights: integrated gradients' path, as Captum takes it
    (its default method, "gausslegendre"; tests/test_why_in_page.py holds them equal to Captum's)."""
    points, weights = np.polynomial.legendre.leggauss(n)
    return [float(a) for a in 0.5 * (1 + points)], [float(w) for w in 0.5 * weights]


class GradientsGraph(nn.Module):
    """Input × gradient and integrated gradients of a decoding, every step at once (see the module's docstring)."""

    def __init__(self, model: Seq2SeqModel) -> None:
        super().__init__()
        self.model = model

    def forward(self, source, tokens, keep_encoder, keep_self, keep_cross, rules, alphas, weights):
        model = self.model
        heads = [*kept("encoder", keep_encoder), *kept("decoder_self", keep_self), *kept("cross", keep_cross)]
        explicit = [  # the attention's explicit path: a hook reads its pattern
            (attention_name(kind, layer, "hook_pattern"), lambda pattern, at: pattern)
            for kind in KINDS
            for layer in range(n_layers(model.config, kind))
        ]
        K, T = alphas.size(0), tokens.size(0)
        src_embeds = model.embed_source(source)  # (1, S, D), before positions, as the Scorer reads them
        tgt_embeds = model.embed_target(decoder_input(model, tokens, 1, source.device))  # (1, T, D)
        point = alphas.repeat_interleave(T)[:, None, None]  # row k·T + t: point k, step t
        step = torch.arange(T).repeat(K)
        with torch.enable_grad():
            src_at = (src_embeds.detach().expand(K * T, -1, -1) * point).requires_grad_()
            tgt_at = (tgt_embeds.detach().expand(K * T, -1, -1) * point).requires_grad_()
            given = [("encoder.hook_embed", lambda x, at: src_at), ("decoder.hook_embed", lambda x, at: tgt_at)]
            run = run_with_cache(model, source.expand(K * T, -1), tokens, hooks=[*heads, *explicit, *given])
            hidden = run.hidden[torch.arange(K * T), step]  # (K·T, D): each row's own step
            logits = model.rules.apply(model.project(hidden), None) + rules[step]
            scores = logits.log_softmax(dim=-1).gather(-1, tokens[step][:, None])[:, 0]
            src_grads, tgt_grads = torch.autograd.grad(scores.sum(), (src_at, tgt_at))
        weight = weights.repeat_interleave(T)[:, None, None]
        src_sum = (src_grads * weight).reshape(K, T, *src_grads.shape[1:]).sum(0)  # (T, S, D)
        tgt_sum = (tgt_grads * weight).reshape(K, T, *tgt_grads.shape[1:]).sum(0)  # (T, T, D)
        return src_embeds * src_sum, tgt_embeds * tgt_sum, scores.reshape(K, T)


def example_inputs(model: Seq2SeqModel) -> tuple:
    """Inputs to trace the graph with: sizes no dimension of the model shares (make_fx ties equal sizes together),
    every head kept, no rule of a step, points and weights of their own."""
    cfg, H = model.config, model.config.n_heads
    source = torch.tensor([[5, 6, 7, 8, 9, 10, 11, 12, 13, 14, cfg.eos_id]])  # S = 11
    tokens = torch.tensor([8, 9, 10, 11, 12, 13, cfg.eos_id])  # T = 7
    keep = [torch.ones(n_layers(cfg, kind), H) for kind in KINDS]
    alphas, weights = torch.tensor([0.1, 0.2, 0.5, 0.7, 0.9]), torch.full((5,), 0.2)  # K = 5
    return (source, tokens, *keep, torch.zeros(7, cfg.tgt_vocab_size), alphas, weights)


GRADIENTS = Analysis("gradients", GradientsGraph, example_inputs, INPUTS, OUTPUTS, AXES, gradients=True)
