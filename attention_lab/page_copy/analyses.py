"""A page copy's explanations' graphs: each a forward pass (or a few) that an explanation tab needs, traced from the
library's own code, so that the page computes the tab's message with ONNX Runtime Web, reading the copy's weights
(graphs.shared_weights stores each weight once for all the copy's graphs). Each graph is a module of its own beside
this one, declared by an Analysis (explanations.py lists them); the copy has {name}.onnx.gz for each the model can be
traced through, and its config.json lists them ("analyses"). The page's side is each tab's in_page.mjs (`made(model, run, asked)`).

A graph is stored gzipped (`packed`): a graph's structure, written once per sublayer it unrolls, shrinks to a sixth
(the reversal model's seven graphs: 2.34 MB, 0.35 MB gzipped, beside its 3.75 MB of weights, which gzip leaves as
they are), and the page unpacks it with the browser's own DecompressionStream (page_copy/model.mjs).
"""

from __future__ import annotations

import gzip
from collections.abc import Callable
from dataclasses import dataclass

import torch
from torch import nn

from transformer.contract import Seq2SeqModel
from transformer.hooks import attention_name


def graph_file(name: str) -> str:
    """The copy's file of the explanations' graph `name`."""
    return f"{name}.onnx.gz"


def packed(graph: bytes) -> bytes:
    """A graph's bytes as its file holds them (the same bytes every time: no time stamp)."""
    return gzip.compress(graph, compresslevel=9, mtime=0)


@dataclass(frozen=True)
class Analysis:
    """One of a page copy's explanations' graphs: {name}.onnx.gz (graph_file), traced from `module(model)` on
    `example(model)`; with `gradients`, a graph whose pass differentiates (traced through torch.fx:
    graphs.differentiated)."""

    name: str
    module: Callable[[Seq2SeqModel], nn.Module]
    example: Callable[[Seq2SeqModel], tuple]
    inputs: tuple[str, ...]
    outputs: tuple[str, ...]
    axes: dict
    gradients: bool = False


def kept(kind: str, keep: torch.Tensor) -> list:
    """Hooks that multiply each head's output of attention `kind` in every layer by `keep` (layers, heads)."""
    return [
        (attention_name(kind, layer, "hook_z"), lambda z, at, layer=layer: z * keep[layer][None, :, None, None])
        for layer in range(keep.size(0))
    ]


def kept_per_row(kind: str, keep: torch.Tensor) -> list:
    """Hooks that multiply each head's output of attention `kind` in every layer, in batch row r, by keep[r]
    (rows, layers, heads): many sets of heads removed in one batched pass, as Interventions(rows=...) removes them."""
    return [
        (attention_name(kind, layer, "hook_z"), lambda z, at, layer=layer: z * keep[:, layer][:, :, None, None])
        for layer in range(keep.size(1))
    ]


def masked(kind: str, keep: torch.Tensor) -> list:
    """Hooks that multiply each head's weights of attention `kind` in every layer by `keep` (layers, heads): the
    head is ablated (its output is its weights times its values, as `kept` does at hook_z) and left out of the
    mixing the readings read, as the library's readings leave an ablated head."""
    return [
        (attention_name(kind, layer, "hook_pattern"), lambda w, at, layer=layer: w * keep[layer][None, :, None, None])
        for layer in range(keep.size(0))
    ]


def masks(keep_encoder: torch.Tensor, keep_self: torch.Tensor, keep_cross: torch.Tensor) -> list:
    """`masked` for the three kinds of attention."""
    return [*masked("encoder", keep_encoder), *masked("decoder_self", keep_self), *masked("cross", keep_cross)]
