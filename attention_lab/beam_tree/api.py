"""The beam search as endpoints: /beam_tree (the search as a tree) and /continue (a decoding forced through a
prefix and on from it)."""

from __future__ import annotations

from ..feature import Endpoint, Limits
from ..request import Request
from .messages import Continued, Tree, continued, tree_record


def beam_tree(request: Request, model: str, text: str, beam_size: int = 4) -> Tree:
    """At each step, each live hypothesis's `beam_size` most probable continuations, marked "kept", "pruned" or
    "finished" (the end token, leaving the beam finished): {"nodes": [{"id", "parent", "step", "token", "logp",
    "total", "state"}], "best", "output_text"}. The root (step 0, parent null, total 0) is the start token; a node's
    total is its parent's plus its logp; the best node's path is /attention's beam output_tokens and output_text
    what /translate with "beam" writes. Finished hypotheses are ranked by the GNMT length penalty (alpha 1). Beam
    sizes 1 to 16."""
    return tree_record(request.run(model, text), beam_size)


def continue_(
    request: Request, model: str, text: str, prefix: list[str], strategy: str = "greedy", beam_size: int = 4
) -> Continued:
    """Decode on from a prefix: its tokens (spelled as output_tokens spells them) forced first, then "greedy" or
    "beam" decoding: {"output_tokens" (the prefix's included, the end token last), "output_text"}."""
    return continued(request.run(model, text), prefix, strategy, beam_size)


ENDPOINTS = (
    Endpoint("beam_tree", beam_tree, Tree, "The beam search of `text` as a tree.", Limits(64, 256)),
    Endpoint("continue", continue_, Continued, "Decode on from a prefix, greedily or by beam search.", Limits(64, 256)),
)
