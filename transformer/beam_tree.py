"""The whole beam search as a tree: every continuation it weighed, not only the hypotheses it kept.

At each step, each live hypothesis's `beam_size` most probable next tokens become nodes, marked:
- "kept": the extension is one of the live hypotheses after the step;
- "finished": it is the end token, among the `beam_size` best extensions of the step, so the hypothesis left the
  beam as a finished one (scored with the length penalty);
- "pruned": the search let it go.
A node's `total` is its parent's total plus its own `logp` (the root, the start token, has 0): the summed
log-probability the search ranks live hypotheses by. Finished hypotheses are ranked by the GNMT length penalty,
total / ((5 + length) / 6) ** alpha (Wu et al. 2016; `length_normalise`), with length counting the end token.

beam_search(..., record_tree=True) fills one SearchTree per source row while it searches: recording changes nothing
the search does (tested).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import torch

KEPT, PRUNED, FINISHED = "kept", "pruned", "finished"


@dataclass(frozen=True)
class Node:
    id: int
    parent: int | None  # None for the root
    step: int  # 0 for the root (the start token), t for the token written at step t
    token: int
    logp: float  # log p of this token after its parent's tokens (0 for the root)
    total: float  # the parent's total plus logp
    state: str  # KEPT, PRUNED or FINISHED (the root is KEPT)


@dataclass
class SearchTree:
    """One source row's beam search, node by node (the root first), and the node its best hypothesis ends at."""

    bos_id: int
    length_penalty: float  # alpha of the GNMT length penalty the finished hypotheses were ranked by
    nodes: list[Node] = field(default_factory=list)
    best: int | None = None
    _paths: dict[tuple[int, ...], int] = field(default_factory=dict, repr=False)  # tokens after bos -> node id

    def __post_init__(self) -> None:
        if not self.nodes:
            self.nodes.append(Node(0, None, 0, self.bos_id, 0.0, 0.0, KEPT))
            self._paths[()] = 0

    def grow(
        self,
        step: int,
        beams: list[list[int]],
        alive: list[bool],
        log_probs: torch.Tensor,
        kept: set[tuple[int, ...]],
        finished: set[tuple[int, ...]],
    ) -> None:
        """Step `step` (1-based): for each live hypothesis `beams[i]` (tokens after bos; alive[i]), its beam size
        most probable continuations by `log_probs[i]` (V,), marked by whether the extension is now live (`kept`) or
        `finished` (paths with the end token). A kept extension outside them (a beam whose end token finished and
        whose next k - 1 continuations were kept) is added too, so that every live hypothesis has its node."""
        k = len(beams)
        for beam, live, row in zip(beams, alive, log_probs):
            if not live:
                continue
            parent = self.nodes[self._paths[tuple(beam)]]
            tokens = row.topk(k).indices.tolist()
            tokens += [path[-1] for path in kept | finished if list(path[:-1]) == beam and path[-1] not in tokens]
            for token in tokens:
                logp = float(row[token])
                if logp == float("-inf"):
                    continue
                path = (*beam, token)
                state = KEPT if path in kept else FINISHED if path in finished else PRUNED
                node = Node(len(self.nodes), parent.id, step, token, logp, parent.total + logp, state)
                self.nodes.append(node)
                if state != PRUNED:
                    self._paths[path] = node.id

    def node_of(self, path: list[int]) -> int | None:
        """The kept or finished node a hypothesis (tokens after bos, the end token included if finished) ends at."""
        return self._paths.get(tuple(path))

    def path(self, node_id: int) -> list[int]:
        """The tokens from the root's child down to `node_id` (the start token left out)."""
        tokens = []
        while node_id is not None and self.nodes[node_id].parent is not None:
            tokens.append(self.nodes[node_id].token)
            node_id = self.nodes[node_id].parent
        return tokens[::-1]
