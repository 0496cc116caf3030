"""The contribution graph as an endpoint: /flow, one step's graph, pruned by a threshold."""

from __future__ import annotations

import math

from transformer.flow import flow

from ..checks import InputError, as_int, quoted
from ..feature import Endpoint, Limits
from ..request import Request
from .messages import DEFAULT_THRESHOLD, FlowGraph, graph_record


def checked_threshold(threshold: object) -> float:
    """A threshold from 0 to 1, or InputError in one line."""
    try:
        value = float(threshold)
    except (TypeError, ValueError):
        value = math.nan
    if isinstance(threshold, bool) or not 0 <= value <= 1:
        raise InputError(f"The threshold must be a number from 0 to 1 (got {quoted(threshold)}).")
    return value


def checked_step(step: object, written: int) -> int:
    at = as_int(step)
    if isinstance(step, bool) or at is None or not 1 <= at <= written:
        raise InputError(
            f"Step must be a whole number from 1 to {written}, this decoding's steps (got {quoted(step)})."
        )
    return at


def flow_endpoint(
    request: Request, model: str, text: str, step: int, threshold: float = DEFAULT_THRESHOLD
) -> FlowGraph:
    """Decode `text` greedily and return step `step`'s (1-based) contribution graph: {"step", "threshold", "nodes":
    [{"id", "side", "layer", "sublayer", "position", "label"}], "edges": [{"from", "to", "kind", "layer", "head",
    "weight"}]}. Nodes are the residual streams: side "encoder" or "decoder", layer 0 for the embeddings, then the
    layer (1-based) after whose sublayer ("self", "cross" or "ffn") the stream is; and the "prediction" (layer and
    sublayer null, position the step's). Edges go through a "head" (its layer and head, 1-based), a "residual" or an
    "ffn" block, weighted as ALTI+ weighs contributions; the edges into each node add up to 1 before pruning.
    Pruning keeps, from the prediction down, the edges of at least `threshold` into a node kept; threshold 0 returns
    the whole graph."""
    limit = checked_threshold(threshold)
    run = request.run(model, text)
    tokens = list(run.session.run())
    at = checked_step(step, len(tokens))
    try:
        found = flow(run.session.model, list(run.session.src_ids), tokens)
    except (ValueError, TypeError) as err:  # a model whose sublayers ALTI+ cannot read
        raise InputError(f"This model's contributions cannot be read: {err}") from err
    return graph_record(run.pipeline, found, found.graph(at).pruned(limit), at, limit)


ENDPOINTS = (
    Endpoint("flow", flow_endpoint, FlowGraph, "One step's contribution graph, pruned by a threshold.", Limits(64, 64)),
)
