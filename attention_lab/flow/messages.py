"""The contribution graph as JSON: one step's graph (/flow), and the whole decoding's edges the Flow tab's page
module cuts each step's graph from (flow/graph.mjs)."""

from __future__ import annotations

import base64
from dataclasses import dataclass
from typing import Annotated, Literal

import numpy as np
from pydantic import Field

from transformer import Seq2SeqPipeline
from transformer.flow import DECODER, ENCODER, FFN, HEAD, SUBLAYERS, Flow, Graph

from ..core.payload import SCALE
from ..core.units import token_label
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


EDGE = np.dtype([("to", "<u2"), ("source", "<u2"), ("weight", "<u2"), ("kind", "u1"), ("head", "u1")])
KIND_CODES = {"residual": 0, HEAD: 1, FFN: 2}


@dataclass
class FlowMessage:
    """The Flow tab's page module is sent the whole decoding's edges at or above FLOOR once, packed: `edges` is
    base64 of `count` little-endian records of 8 bytes (EDGE): the node it goes into and the node it comes from
    (uint16 each), its weight (uint16, round(w · 65535)), its kind (uint8: 0 residual, 1 head, 2 ffn) and its head
    (uint8, 1-based; 0 for none). A node's number: the encoder's level · S + position, then the decoder's
    (2 · Le + 1) · S + level · T + position, where S is the source's length, T the decoding's, and a level is 0 for
    the embeddings, then each sublayer's stream in order (the encoder's self, ffn per layer; the decoder's self,
    cross, ffn). Step t's graph is the encoder's streams, the decoder's first t positions', and the prediction,
    which takes the decoder's last stream at position t - 1 (flow/graph.mjs cuts it)."""

    key: Key
    tokens: list[int]  # the decoding it read
    layers: tuple[int, int]  # the encoder's and the decoder's
    heads: int
    source: list[str]  # labels
    inputs: list[str]  # the decoder inputs' labels
    written: list[str]  # the written tokens' labels
    floor: float
    count: int  # edges
    edges: str  # base64 of `count` EDGE records
    error: Annotated[str | None, Field(exclude_if=lambda value: value is None)] = None
    op: Literal["flow"] = "flow"


def node_number(side: str, layer: int, sublayer: str | None, position: int, S: int, T: int, layers: tuple) -> int:
    """A stream's number in FlowMessage's edges."""
    per_layer = SUBLAYERS[side]
    level = 0 if layer == 0 else len(per_layer) * (layer - 1) + per_layer.index(sublayer) + 1
    return level * S + position if side == ENCODER else (2 * layers[0] + 1) * S + level * T + position


def packed(edges: list[tuple[int, int, float, int, int]]) -> str:
    """(to, from, weight, kind, head) rows as FlowMessage's base64 EDGE records."""
    records = np.zeros(len(edges), dtype=EDGE)
    for i, (to, source, weight, kind, head) in enumerate(edges):
        records[i] = (to, source, round(min(1.0, max(0.0, weight)) * SCALE), kind, head)
    return base64.b64encode(records.tobytes()).decode("ascii")


def flow_message(key: Key, pipeline: Seq2SeqPipeline, flow: Flow) -> FlowMessage:
    """The whole decoding's edges for the page (see FlowMessage), read from its last step's graph: every step's is
    a part of it."""
    source, inputs, written = labels(pipeline, flow)
    S, T, layers = len(flow.src_ids), len(flow.tokens), (len(flow.encoder), len(flow.decoder))
    graph = flow.graph(T)
    number = {
        n.id: node_number(n.side, n.layer, n.sublayer, n.position, S, T, layers)
        for n in graph.nodes
        if n.side != "prediction"
    }
    edges = [
        (number[e.target], number[e.source], e.weight, KIND_CODES[e.kind], e.head or 0)
        for e in graph.edges
        if e.target in number and e.weight >= FLOOR
    ]
    heads = pipeline.model.config.n_heads
    return FlowMessage(key, list(flow.tokens), layers, heads, source, inputs, written, FLOOR, len(edges), packed(edges))
