"""Beam search with a KV cache (transformer.decoding names it too): hypotheses that end leave the beam, scored with
the GNMT length penalty; its history or its whole tree (transformer.beam_tree) is kept on request.

Dimension key: B batch, k beams, S source positions, V vocabulary.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import torch

from .beam_tree import SearchTree
from .contract import Cache, Seq2SeqModel
from .interventions import Interventions, held
from .next_token import _checked, _max_new_tokens, next_token_logits


@dataclass
class BeamResult:
    tokens: list[int]  # the best hypothesis, without bos/eos
    score: float  # its length-normalised log-probability
    # history[t]: the live beams after step t, as (tokens so far, summed log-probability), best first
    history: list[list[tuple[list[int], float]]] = field(default_factory=list)
    # every hypothesis the search ended with, as (tokens, length-normalised log-probability), best first
    candidates: list[tuple[list[int], float]] = field(default_factory=list)
    tree: SearchTree | None = None  # the whole search, when it was recorded (record_tree)


def length_normalise(log_prob: float, length: int, alpha: float) -> float:
    """GNMT length penalty (Wu et al. 2016): log_prob / ((5 + length) / 6) ** alpha; alpha 0 is plain log-probability."""
    return log_prob / (((5 + length) / 6) ** alpha)


@dataclass
class _Row:
    """The beam search of one source row: the hypotheses that ended with eos, its history, and whether it is done."""

    k: int  # beam size
    alpha: float  # length penalty
    eos_id: int
    record_history: bool
    finished: list[tuple[float, list[int]]] = field(default_factory=list)  # (normalised score, tokens without eos)
    history: list[list[tuple[list[int], float]]] = field(default_factory=list)
    done: bool = False
    at_limit: bool = False  # still searching when the length limit came: its live beams are candidates too
    tree: SearchTree | None = None  # filled step by step when the search is recorded

    def extend(self, beams: list[list[int]], top_scores: list[float], top_ids: list[int], V: int) -> list[tuple]:
        """The row's next live beams from its 2k best extensions, as (beam, token, hypothesis, summed log-prob), at
        most k; extensions that end with eos leave the beam as finished hypotheses."""
        if self.done:
            return []
        live = []
        for rank, (score, flat) in enumerate(zip(top_scores, top_ids)):
            if score == float("-inf"):
                break
            beam, token = divmod(flat, V)
            hyp = beams[beam] + [token]
            if token == self.eos_id:
                if rank < self.k:  # only eos among the k best counts, as in the usual implementations
                    self.finished.append((length_normalise(score, len(hyp), self.alpha), hyp[:-1]))
                continue
            if len(live) < self.k:
                live.append((beam, token, hyp, score))
        if self.record_history:
            self.history.append([(hyp, score) for _, _, hyp, score in live])
        return live

    def update(self, live_scores: torch.Tensor, length: int, max_length: int) -> None:
        """After a step that left hypotheses of `length` tokens: stop at the limit, or when no live beam can win."""
        if not self.done:
            self.at_limit = length == max_length
            self.done = self.at_limit or self._cannot_improve(live_scores, length, max_length)

    def _cannot_improve(self, live_scores: torch.Tensor, length: int, max_length: int) -> bool:
        """True when no live beam can still beat the k-th best finished hypothesis."""
        if len(self.finished) < self.k:
            return False
        worst_kept = sorted((s for s, _ in self.finished), reverse=True)[self.k - 1]
        best_live = live_scores.max().item()
        if best_live == float("-inf"):
            return True
        # A live beam's log-probability only falls as it grows (it is negative), so its best normalised score is
        # reached with the most favourable penalty over the lengths it can still have.
        bound = max(length_normalise(best_live, n, self.alpha) for n in (length + 1, max_length + 1))
        return bound < worst_kept

    def result(self, beams: list[list[int]], scores: list[float]) -> BeamResult:
        """The best hypothesis and every candidate, best first; live beams count when the limit stopped the row."""
        candidates = list(self.finished)
        if self.at_limit or len(candidates) < self.k:
            for hyp, score in zip(beams, scores):
                if score > float("-inf"):
                    candidates.append((length_normalise(score, len(hyp), self.alpha), hyp))
        candidates.sort(key=lambda c: c[0], reverse=True)
        best_score, best = candidates[0]
        if self.tree is not None:
            ended = self.tree.node_of([*best, self.eos_id])
            self.tree.best = ended if ended is not None else self.tree.node_of(best)
        return BeamResult(best, best_score, self.history, [(hyp, score) for score, hyp in candidates], self.tree)

    def step(self, beams: list[list[int]], scores: list[float], top: tuple, log_probs, step: int) -> list[tuple]:
        """Extend the row's beams by one step (see extend); when recorded, each live beam's top continuations
        (its rows of `log_probs`, (k, V)) go into the tree, marked kept, finished or pruned."""
        if self.tree is None or self.done:
            return self.extend(beams, *top)
        alive = [score > float("-inf") for score in scores]
        before = len(self.finished)
        live = self.extend(beams, *top)
        kept = {tuple(hyp) for _, _, hyp, _ in live}
        finished = {(*hyp, self.eos_id) for _, hyp in self.finished[before:]}
        self.tree.grow(step, beams, alive, log_probs, kept, finished)
        return live


def _only(log_probs: torch.Tensor, token: int) -> torch.Tensor:
    """Log-probabilities (N, V) with every token but `token` at -inf: a forced step, at the token's own log p."""
    forced = torch.full_like(log_probs, float("-inf"))
    forced[:, token] = log_probs[:, token]
    return forced


@torch.no_grad()
def beam_search(
    model: Seq2SeqModel,
    src: torch.Tensor,
    beam_size: int = 4,
    max_new_tokens: int | None = None,
    length_penalty: float = 1.0,
    record_history: bool = False,
    interventions: Interventions | None = None,
    record_tree: bool = False,
    prefix: list[int] = (),
) -> list[BeamResult]:
    """Beam search over a padded batch src (B, S); returns one BeamResult per row.

    Hypotheses that emit eos leave the beam and are scored with the GNMT length penalty (`length_penalty` is its
    alpha; see length_normalise); a row stops once it has `beam_size` finished hypotheses and no live beam can still
    beat the worst of them. `interventions` ablates heads throughout and applies cross-attention edits at their
    steps, in every beam. `record_tree` keeps the whole search (transformer.beam_tree) in each result's tree.
    `prefix` is forced first in every row (its tokens alone may be written, at their own log p), then the search
    goes on from it.
    """
    if beam_size < 1:
        raise ValueError(f"beam_size must be at least 1 (got {beam_size})")
    steps = _max_new_tokens(model, max_new_tokens)
    with held(_checked(model, interventions)):
        return _search(model, src, beam_size, steps, length_penalty, record_history, record_tree, list(prefix))


def _search(model, src, k, steps, length_penalty, record_history, record_tree, prefix) -> list[BeamResult]:
    """beam_search's loop, for `steps` steps at most, under the hooks it holds."""
    cfg = model.config
    B, device = src.size(0), src.device
    enc = model.encode(src)
    batch_rows = torch.arange(B, device=device).repeat_interleave(k)  # beam row -> batch row
    memory, src_mask = enc.memory[batch_rows], enc.src_mask[batch_rows]  # (B*k, S, D), (B*k, 1, 1, S)
    rows = [_Row(k, length_penalty, cfg.eos_id, record_history) for _ in range(B)]
    for row in rows if record_tree else ():
        row.tree = SearchTree(cfg.bos_id, length_penalty)
    scores = torch.full((B, k), float("-inf"), device=device)
    scores[:, 0] = 0.0  # all beams start identical: keep one so the first step does not pick duplicates
    beams: list[list[int]] = [[] for _ in range(B * k)]
    next_input = torch.full((B * k, 1), cfg.bos_id, dtype=torch.long, device=device)
    cache: Cache | None = None
    for step in range(steps):
        dec = model.decode(next_input, memory, src_mask, cache, use_cache=True)
        log_probs = next_token_logits(model, dec.hidden[:, -1], step, steps).log_softmax(dim=-1)  # (B*k, V)
        if step < len(prefix):
            log_probs = _only(log_probs, prefix[step])
        V = log_probs.size(-1)
        total = (scores.view(-1, 1) + log_probs).view(B, k * V)
        top_scores, top_ids = total.topk(2 * k, dim=1)  # enough candidates to refill k beams after eos ones leave
        top_scores, top_ids, previous = top_scores.tolist(), top_ids.tolist(), scores.tolist()
        scores = torch.full((B, k), float("-inf"), device=device)
        source_rows, new_tokens, new_beams = [], [], []
        for b, row in enumerate(rows):
            mine = slice(b * k, (b + 1) * k)
            live = row.step(beams[mine], previous[b], (top_scores[b], top_ids[b], V), log_probs[mine], step + 1)
            # Rows that are done (or ran out of candidates) keep dummy beams at -inf so shapes stay fixed.
            live += [(0, cfg.pad_id, [], float("-inf")) for _ in range(k - len(live))]
            for i, (beam, token, hyp, score) in enumerate(live):
                scores[b, i] = score
                source_rows.append(b * k + beam)
                new_tokens.append(token)
                new_beams.append(hyp)
            row.update(scores[b], step + 1, steps)
        beams = new_beams
        if all(row.done for row in rows):
            break
        cache = dec.cache.select(torch.tensor(source_rows, device=device))
        next_input = torch.tensor(new_tokens, device=device)[:, None]
    return [row.result(beams[b * k : (b + 1) * k], scores[b].tolist()) for b, row in enumerate(rows)]
