"""Information flow routes (Ferrando & Voita 2024, "Information Flow Routes: Automatically Interpreting Language
Models at Scale"), for an encoder-decoder: the graph of what each residual stream takes from the streams below it,
read from one forward pass.

Nodes are the residual streams: each position's embedding (layer 0), then its stream after each sublayer of each
layer ("self" and "ffn" in the encoder; "self", "cross" and "ffn" in the decoder), and the prediction. An edge is
what one stream adds to another, through one attention head, a residual or a feed-forward block, and the edges into
a node add up to 1.

The attention edges are ALTI+'s contributions (transformer.contributions, Ferrando et al. 2022), split over heads.
ALTI+ measures how close each key's term, every head's a_ij^h v_j^h W_o^h summed (and, for the query's own key in
self-attention, the residual stream), is to the sublayer's output; here that key's contribution is shared among the
parts of its term (each head, and the residual) by how close each part is to the term, in the same measure (an equal
share where none is close). The shares of a key add up to its contribution, so summing a route's parallel head edges
gives ALTI+'s matrices back, and the graph's routes from the source add up, exactly, to ALTI+'s source share.

A feed-forward block reads its own position only: its node takes everything from the stream before it, split into a
residual edge and an ffn edge by how close each of the two (the stream, the block's output) is to their sum (the
centred vectors when a LayerNorm follows the sum, as it would centre them; its gain is left out). Both edges come from
the same node, so the split leaves every route total as ALTI+ leaves it; it says which of the two carried it.

A route's weight is the product of its edges' weights; the weights of all routes from a node to the prediction add up
to its share of the prediction. Pruning by a threshold (as Ferrando & Voita) keeps, from the prediction down, the
edges of at least that weight into a node kept, and the nodes they come from.

Dimension key: S source positions, T decoder inputs (the start token, then the tokens written before the last step),
H heads, D width.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import torch

from .config import n_layers
from .contract import Seq2SeqModel
from .contributions import Mixing, Sublayer, closeness, exact, sublayer_contributions, through_norm
from .forced import one_run, run_with_cache
from .interventions import Interventions

ENCODER, DECODER, PREDICTION = "encoder", "decoder", "prediction"
HEAD, RESIDUAL, FFN = "head", "residual", "ffn"
SUBLAYERS = {ENCODER: ("self", "ffn"), DECODER: ("self", "cross", "ffn")}


@dataclass(frozen=True)
class Node:
    id: str
    side: str  # ENCODER, DECODER or PREDICTION
    layer: int | None  # 0: the embeddings; then the layer (1-based) the stream is in; None for the prediction
    sublayer: str | None  # the stream after this sublayer ("self", "cross" or "ffn"); None for the embeddings
    position: int  # 0-based; the prediction's is its step's decoder input


@dataclass(frozen=True)
class Edge:
    source: str  # the node it comes from
    target: str  # the node it goes into
    kind: str  # HEAD, RESIDUAL or FFN
    layer: int | None  # the layer (1-based) of the sublayer it goes through; None into the prediction
    head: int | None  # 1-based, for a head edge
    weight: float


def node_id(side: str, layer: int, sublayer: str | None, position: int) -> str:
    return f"{side}.{layer}.{sublayer or 'embed'}.{position}"


@dataclass
class Graph:
    """One step's graph: `nodes` bottom up (the encoder's, the decoder's, the prediction last), `edges` into them."""

    nodes: list[Node]
    edges: list[Edge]
    prediction: str = PREDICTION

    def into(self) -> dict[str, list[Edge]]:
        """Per node id: the edges that go into it."""
        found: dict[str, list[Edge]] = {}
        for edge in self.edges:
            found.setdefault(edge.target, []).append(edge)
        return found

    def pruned(self, threshold: float) -> Graph:
        """From the prediction down, the edges of weight >= `threshold` into a node kept and the nodes they come
        from. Threshold 0 keeps the whole graph, the nodes that reach nothing included."""
        if threshold <= 0:
            return Graph(list(self.nodes), list(self.edges), self.prediction)
        into = self.into()
        kept_nodes, kept_edges = {self.prediction}, []
        for node in reversed(self.nodes):  # top down: every edge goes up, so a node's users come before it
            if node.id not in kept_nodes:
                continue
            for edge in into.get(node.id, ()):
                if edge.weight >= threshold:
                    kept_edges.append(edge)
                    kept_nodes.add(edge.source)
        return Graph([n for n in self.nodes if n.id in kept_nodes], kept_edges[::-1], self.prediction)

    def reach(self) -> dict[str, float]:
        """Per node: the summed weight of every route from it to the prediction (its share of the prediction)."""
        into = self.into()
        reach = {node.id: 0.0 for node in self.nodes}
        reach[self.prediction] = 1.0
        for node in reversed(self.nodes):
            for edge in into.get(node.id, ()):
                reach[edge.source] += edge.weight * reach[node.id]
        return reach

    def source_total(self) -> float:
        """The summed weight of every route from the source's embeddings: ALTI+'s source share of the step."""
        reach = self.reach()
        return sum(reach[n.id] for n in self.nodes if n.side == ENCODER and n.layer == 0)

    def heaviest_route(self, side: str | None = None) -> tuple[list[Edge], float]:
        """The route to the prediction whose edges' product is largest, from any embedding (or only from `side`'s),
        and that product."""
        into = self.into()
        best: dict[str, tuple[float, Edge | None]] = {self.prediction: (1.0, None)}  # node -> (weight, edge up)
        for node in reversed(self.nodes):
            if node.id not in best:
                continue
            weight = best[node.id][0]
            for edge in into.get(node.id, ()):
                if edge.source not in best or edge.weight * weight > best[edge.source][0]:
                    best[edge.source] = (edge.weight * weight, edge)
        starts = [n for n in self.nodes if n.layer == 0 and n.id in best and (side is None or n.side == side)]
        if not starts:
            return [], 0.0
        start = max(starts, key=lambda n: best[n.id][0])
        route, at = [], start.id
        while best[at][1] is not None:
            route.append(best[at][1])
            at = best[at][1].target
        return route, best[start.id][0]


@dataclass
class Split:
    """One sublayer's edges into each query (rows: queries): the residual's weight and each head's from each key."""

    residual: torch.Tensor  # (Q,)
    heads: torch.Tensor  # (Q, H, K); for a feed-forward block (Q, 1, 1): the block's own edge


@dataclass
class Flow:
    """The edges of every sublayer over a whole decoding, from which each step's graph is cut (a step reads the
    decoder inputs before it, and the decoder is causal: its streams there are the same in a longer decoding)."""

    src_ids: list[int]
    tokens: list[int]  # written, the end token included if written
    encoder: list[dict[str, Split]] = field(default_factory=list)  # per layer: "self", "ffn"
    decoder: list[dict[str, Split]] = field(default_factory=list)  # per layer: "self", "cross", "ffn"

    def graph(self, step: int) -> Graph:
        """Step `step`'s (1-based) whole graph, unpruned."""
        if not 1 <= step <= len(self.tokens):
            raise ValueError(f"step must be from 1 to {len(self.tokens)} (got {step})")
        S, T = len(self.src_ids), step
        nodes = [Node(node_id(ENCODER, 0, None, j), ENCODER, 0, None, j) for j in range(S)]
        edges: list[Edge] = []
        below = [nodes[j].id for j in range(S)]
        for layer, split in enumerate(self.encoder, start=1):
            below = _attention(nodes, edges, ENCODER, layer, "self", split["self"], below, below, S)
            below = _ffn(nodes, edges, ENCODER, layer, split["ffn"], below, S)
        memory = below
        nodes += [Node(node_id(DECODER, 0, None, i), DECODER, 0, None, i) for i in range(T)]
        below = [node_id(DECODER, 0, None, i) for i in range(T)]
        for layer, split in enumerate(self.decoder, start=1):
            below = _attention(nodes, edges, DECODER, layer, "self", split["self"], below, below, T)
            below = _attention(nodes, edges, DECODER, layer, "cross", split["cross"], below, memory, T)
            below = _ffn(nodes, edges, DECODER, layer, split["ffn"], below, T)
        nodes.append(Node(PREDICTION, PREDICTION, None, None, T - 1))
        edges.append(Edge(below[T - 1], PREDICTION, RESIDUAL, None, None, 1.0))
        return Graph(nodes, edges)


def _attention(nodes, edges, side, layer, sublayer, split: Split, own, keys, queries) -> list[str]:
    """Add the nodes of an attention sublayer's `queries` first positions and their edges: the residual from `own`
    (the stream below at the same position), each head's from `keys` (a decoder's self-attention reads up to the
    query). Returns the new nodes' ids."""
    ids = []
    causal = side == DECODER and sublayer == "self"
    heads = split.heads.tolist()
    residual = split.residual.tolist()
    for i in range(queries):
        at = node_id(side, layer, sublayer, i)
        nodes.append(Node(at, side, layer, sublayer, i))
        ids.append(at)
        edges.append(Edge(own[i], at, RESIDUAL, layer, None, residual[i]))
        for h, row in enumerate(heads[i], start=1):
            for j in range(i + 1 if causal else len(keys)):
                edges.append(Edge(keys[j], at, HEAD, layer, h, row[j]))
    return ids


def _ffn(nodes, edges, side, layer, split: Split, own, queries) -> list[str]:
    ids = []
    residual = split.residual.tolist()
    for i in range(queries):
        at = node_id(side, layer, "ffn", i)
        nodes.append(Node(at, side, layer, "ffn", i))
        ids.append(at)
        edges.append(Edge(own[i], at, RESIDUAL, layer, None, residual[i]))
        edges.append(Edge(own[i], at, FFN, layer, None, 1.0 - residual[i]))
    return ids


def shares(parts: torch.Tensor) -> torch.Tensor:
    """parts (..., N, D) of a term (their sum) -> (..., N): how close each is to the term, normalised to add up to
    1; equal shares where none is close."""
    near = closeness(parts)
    none = near.sum(dim=-1, keepdim=True) == 0
    return torch.where(none, torch.full_like(near, 1.0 / near.size(-1)), near)


def split_attention(sublayer: Sublayer, cross: bool) -> Split:
    """An attention sublayer's ALTI+ contributions (batch row 0), each key's shared among its heads (and, for the
    query's own key in self-attention, the residual)."""
    keys = sublayer_contributions(sublayer, cross)  # (Q, K) self; (Q, 1 + K) cross: ALTI+'s own
    H, K = sublayer.values.size(1), sublayer.values.size(3)
    by_head = sublayer.w_o.view(sublayer.w_o.size(0), H, K)
    moved = torch.einsum("hsk,dhk->hsd", sublayer.values[0].to(by_head), by_head)  # (H, S, D)
    parts = torch.einsum("hts,hsd->tshd", sublayer.weights[0].to(moved), moved).to(exact())  # (Q, K, H, D)
    residual = sublayer.residual[0].to(exact())  # (Q, D)
    whole = residual + parts.sum(dim=(1, 2))
    if sublayer.b_o is not None:
        whole = whole + sublayer.b_o.to(exact())
    Q, S, D = parts.size(0), parts.size(1), parts.size(3)  # D named: a window of no rows (Q = 0) has no -1
    normed = through_norm(parts.reshape(Q, S * H, D), whole, sublayer.norm).view(Q, S, H, D)
    if cross:
        split = shares(normed)  # (Q, S, H)
        return Split(keys[:, 0].float(), (keys[:, 1:, None] * split).permute(0, 2, 1).float())
    own, key = torch.arange(Q), sublayer.own_keys()  # each query row, and its own key
    mine = torch.cat([through_norm(residual[:, None], whole, sublayer.norm), normed[own, key]], dim=1)  # (Q, 1+H, D)
    split = shares(normed)  # (Q, S, H)
    split[own, key] = 0.0
    mine_split = shares(mine)  # (Q, 1 + H): the residual's share of the own key, then each head's
    heads = keys[:, :, None] * split
    heads[own, key] = keys[own, key, None] * mine_split[:, 1:]
    return Split((keys[own, key] * mine_split[:, 0]).float(), heads.permute(0, 2, 1).float())


def split_ffn(stream: torch.Tensor, block: torch.Tensor, centred: bool) -> Split:
    """A feed-forward block's node: the stream before it (Q, D) and the block's output (Q, D) -> the residual's
    share (and the block's, 1 minus it)."""
    terms = torch.stack([stream[0], block[0]], dim=1).to(exact())  # (Q, 2, D)
    if centred:
        terms = terms - terms.mean(dim=-1, keepdim=True)
    split = shares(terms)
    return Split(split[:, 0].float(), split[:, 1:, None].float())


def flow_points(model: Seq2SeqModel) -> list[str]:
    """The hook points `flow_of` reads besides the mixing: each layer's stream before and after its feed-forward
    block."""
    L_enc, L_dec = n_layers(model.config, "encoder"), n_layers(model.config, "decoder_self")
    names = [f"encoder.layers.{layer}.{p}" for layer in range(L_enc) for p in ("hook_resid_mid", "hook_ff_out")]
    return names + [
        f"decoder.layers.{layer}.{p}" for layer in range(L_dec) for p in ("hook_resid_mid_cross", "hook_ff_out")
    ]


def flow(
    model: Seq2SeqModel, src_ids: list[int], tokens: list[int], interventions: Interventions | None = None
) -> Flow:
    """The contribution graph's edges for a decoding of `src_ids` that wrote `tokens` (the end token included, if
    written), under the interventions it held: one forward pass over the whole decoding."""
    if not len(tokens):
        raise ValueError("nothing was written: decode a step first")
    one_run(interventions, "the flow routes")
    mixing = Mixing()
    ablated = interventions.ablate if interventions is not None else frozenset()
    with torch.no_grad():
        seen = run_with_cache(model, src_ids, tokens, flow_points(model), interventions, mixing.hooks(model, ablated))
    return flow_of(model, mixing, seen.cache, src_ids, tokens)


def flow_of(model: Seq2SeqModel, mixing: Mixing, seen: dict[str, torch.Tensor], src_ids, tokens) -> Flow:
    """The edges of every sublayer from what one teacher-forced pass gave: `mixing` (its Mixing hooks held) and
    `seen`, its values at flow_points (src_ids and tokens: lists, or the tensors a traced graph reads)."""
    result = Flow(list(src_ids), list(tokens))
    centred = lambda kind, layer: model.sublayer(kind, layer).norm is not None  # post-LN: a norm after each sum
    for layer in range(n_layers(model.config, "encoder")):
        at = f"encoder.layers.{layer}"
        ffn = split_ffn(seen[f"{at}.hook_resid_mid"], seen[f"{at}.hook_ff_out"], centred("encoder", layer))
        self_split = split_attention(mixing.sublayers[("encoder", layer)], cross=False)
        result.encoder.append({"self": self_split, "ffn": ffn})
    for layer in range(n_layers(model.config, "decoder_self")):
        at = f"decoder.layers.{layer}"
        ffn = split_ffn(seen[f"{at}.hook_resid_mid_cross"], seen[f"{at}.hook_ff_out"], centred("cross", layer))
        result.decoder.append({
            "self": split_attention(mixing.sublayers[("decoder_self", layer)], cross=False),
            "cross": split_attention(mixing.sublayers[("cross", layer)], cross=True),
            "ffn": ffn,
        })  # fmt: skip
    return result
