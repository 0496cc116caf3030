"""The contribution graph as JSON: one step's graph (/flow), and the whole decoding's edges the Flow tab's page
module cuts each step's graph from (flow/graph.mjs)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Literal

from pydantic import Field

from transformer import Seq2SeqPipeline
from transformer.flow import DECODER, ENCODER, FFN, HEAD, Flow, Graph

from ..attention.units import token_label
from ..decoding.messages import Key

FLOOR = 0.01  # the page's lowest threshold: lighter edges are not sent (pruning at or above it never keeps them)
DEFAULT_THRESHOLD = 0.04  # Ferrando & Voita's 0.04 for a small model's graphs


@dataclass
class FlowNode:
    id: str
    side: str  # "encoder", "decoder" or "prediction"
    layer: int | None  # 0: the embeddings, then the layer (1-based) the stream is in; null for the prediction
    sublayer: str | None  # the stream after "self", "cross" or "ffn"; null for the embeddings and the prediction
    position: int  # 0-based; the prediction's is the step's
    label: str  # the token at that position (the prediction: the token written)


@dataclass
class FlowEdge:
    source: Annotated[str, Field(serialization_alias="from")]
    to: str
    kind: str  # "head", "residual" or "ffn"
    layer: int | None  # the layer (1-based) of the sublayer it goes through; null into the prediction
    head: int | None  # 1-based, for a head edge
    weight: float


@dataclass
class FlowGraph:
    step: int
    threshold: float
    nodes: list[FlowNode]
    edges: list[FlowEdge]


def labels(pipeline: Seq2SeqPipeline, flow: Flow) -> tuple[list[str], list[str], list[str]]:
    """The source's token labels, the decoder inputs' (the start token, then the tokens written before the last)
    and the written tokens'."""
    tokenizer, special, bos = pipeline.tokenizer, pipeline.model.special_ids, pipeline.model.config.bos_id
    label = lambda i: token_label(tokenizer, i, special)
    return (
        [label(i) for i in flow.src_ids],
        [label(i) for i in [bos, *flow.tokens[:-1]]],
        [label(i) for i in flow.tokens],
    )


def graph_record(pipeline: Seq2SeqPipeline, flow: Flow, graph: Graph, step: int, threshold: float) -> FlowGraph:
    source, inputs, written = labels(pipeline, flow)

    def label(node) -> str:
        return (
            source[node.position]
            if node.side == ENCODER
            else inputs[node.position]
            if node.side == DECODER
            else written[step - 1]
        )

    nodes = [FlowNode(n.id, n.side, n.layer, n.sublayer, n.position, label(n)) for n in graph.nodes]
    edges = [FlowEdge(e.source, e.target, e.kind, e.layer, e.head, e.weight) for e in graph.edges]
    return FlowGraph(step, threshold, nodes, edges)


@dataclass
class FlowMessage:
    """The Flow tab's page module is sent the whole decoding's edges at or above FLOOR, each as [side, level,
    position] of the node it goes into, [side, level, position] of the node it comes from, its kind, its head and its
    weight; side 0 is the encoder and 1 the decoder, level 0 the embeddings, then each sublayer's stream in order
    (the encoder's self, ffn per layer; the decoder's self, cross, ffn). Step t's graph is the encoder's and the
    decoder's first t positions, and the prediction, which takes the decoder's last stream at position t - 1."""

    key: Key
    tokens: list[int]  # the decoding it read
    layers: tuple[int, int]  # the encoder's and the decoder's
    heads: int
    source: list[str]  # labels
    inputs: list[str]  # the decoder inputs' labels
    written: list[str]  # the written tokens' labels
    floor: float
    edges: list[tuple[int, int, int, int, int, int, int, int, float]]  # to (side, level, position), from (...),
    # kind (0 residual, 1 head, 2 ffn), head (1-based, 0 for none), weight (as /flow gives it: the page prunes as
    # the library does)
    error: Annotated[str | None, Field(exclude_if=lambda value: value is None)] = None
    op: Literal["flow"] = "flow"


KIND_CODES = {"residual": 0, HEAD: 1, FFN: 2}


def flow_message(key: Key, pipeline: Seq2SeqPipeline, flow: Flow) -> FlowMessage:
    """The whole decoding's edges for the page (see FlowMessage), read from its last step's graph: every step's is
    a part of it."""
    source, inputs, written = labels(pipeline, flow)
    graph = flow.graph(len(flow.tokens))
    where = {}
    per_layer = {ENCODER: 2, DECODER: 3}
    order = {ENCODER: {"self": 1, "ffn": 2}, DECODER: {"self": 1, "cross": 2, "ffn": 3}}
    for n in graph.nodes:
        if n.side in per_layer:
            level = 0 if n.layer == 0 else per_layer[n.side] * (n.layer - 1) + order[n.side][n.sublayer]
            where[n.id] = (0 if n.side == ENCODER else 1, level, n.position)
    edges = [
        (*where[e.target], *where[e.source], KIND_CODES[e.kind], e.head or 0, e.weight)
        for e in graph.edges
        if e.target in where and e.weight >= FLOOR
    ]
    cfg = pipeline.model.config
    layers = (len(flow.encoder), len(flow.decoder))
    return FlowMessage(key, list(flow.tokens), layers, cfg.n_heads, source, inputs, written, FLOOR, edges)
