"""Greedy and beam-search decoding with a KV cache, and a step-by-step session that records what the model saw.

Every function here runs the decoder on the new position only and keeps earlier keys/values in the model's cache,
so a step costs one position rather than a re-run of the prefix. greedy_decode and beam_search return token lists
without bos and eos; a DecodingSession's tokens end with eos once the model has written it.

They drive any model that meets transformer.contract.Seq2SeqModel: ours, and the adapters' models.

Dimension key: B batch, k beams, H heads, S source positions, P positions decoded so far, V vocabulary.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field

import torch

from .beam_tree import SearchTree
from .contract import Cache, Seq2SeqModel
from .interventions import Interventions


def _max_new_tokens(model: Seq2SeqModel, requested: int | None) -> int:
    limit = model.config.max_new_tokens
    if requested is None:
        return limit
    if requested < 1:
        raise ValueError(f"max_new_tokens must be at least 1 (got {requested})")
    return min(requested, limit)


def next_token_logits(
    model: Seq2SeqModel, hidden: torch.Tensor, step: int | None = None, limit: int | None = None
) -> torch.Tensor:
    """Logits (..., V) for the next token from the decoder's hidden state at decoding step `step` (0-based; None:
    positions along dim -2 are steps 0, 1, ...); what the model may not write there is -inf (see model.rules)."""
    return model.rules.apply(model.project(hidden), step, limit)


def _strip(ids: list[int], eos_id: int) -> list[int]:
    return ids[: ids.index(eos_id)] if eos_id in ids else ids


def _checked(model: Seq2SeqModel, interventions: Interventions | None) -> Interventions | None:
    if interventions:
        interventions.check(model.config)
    return interventions or None


@torch.no_grad()
def greedy_decode(
    model: Seq2SeqModel,
    src: torch.Tensor,
    max_new_tokens: int | None = None,
    interventions: Interventions | None = None,
    src_embeds: torch.Tensor | None = None,
) -> list[list[int]]:
    """Decode a padded batch src (B, S) greedily; returns B token lists (no bos/eos).

    `interventions` ablates heads throughout and applies cross-attention edits at their steps. `src_embeds` (B, S, D)
    is read in place of the source's token embeddings (a source corrupted with noise, transformer.patching).
    """
    cfg = model.config
    steps = _max_new_tokens(model, max_new_tokens)
    interventions = _checked(model, interventions)
    enc = model.encode(src, interventions=interventions, src_embeds=src_embeds)
    B = src.size(0)
    next_input = torch.full((B, 1), cfg.bos_id, dtype=torch.long, device=src.device)
    finished = torch.zeros(B, dtype=torch.bool, device=src.device)
    cache: Cache | None = None
    out = []
    for step in range(steps):
        dec = model.decode(next_input, enc.memory, enc.src_mask, cache, use_cache=True, interventions=interventions)
        cache = dec.cache
        token = next_token_logits(model, dec.hidden[:, -1], step, steps).argmax(dim=-1)  # (B,)
        token = token.masked_fill(finished, cfg.pad_id)  # finished rows only pad on
        out.append(token)
        finished |= token == cfg.eos_id
        if finished.all():
            break
        next_input = token[:, None]
    ids = torch.stack(out, dim=1).tolist()
    return [_strip(row, cfg.eos_id) for row in ids]


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
    cfg = model.config
    steps = _max_new_tokens(model, max_new_tokens)
    B, k, device = src.size(0), beam_size, src.device
    interventions = _checked(model, interventions)
    enc = model.encode(src, interventions=interventions)
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
        dec = model.decode(next_input, memory, src_mask, cache, use_cache=True, interventions=interventions)
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


@dataclass
class Step:
    """What the model did at one decoding step: the distribution, the token taken, and the attention that produced it."""

    token: int  # the token chosen at this step
    forced: bool  # chosen by the user rather than by argmax
    prob: float  # the model's probability of that token
    top_ids: list[int]  # the k most likely next tokens, best first
    top_probs: list[float]
    self_attention: list[torch.Tensor]  # per decoder layer: (H, P) this step's row over the positions so far
    cross_attention: list[torch.Tensor]  # per decoder layer: (H, S) this step's row over the source


class DecodingSession:
    """Greedy step-by-step decoding of one source sentence, recording every step, with back and what-if.

    The attention it records is the attention the decoding computed (the same forward pass that chose the token),
    read through the KV cache, so drawing it needs no second pass.

    Examples:
        >>> from transformer import Transformer, TransformerConfig
        >>> cfg = TransformerConfig(src_vocab_size=12, tgt_vocab_size=12, d_model=16, n_heads=4,
        ...                         n_encoder_layers=2, n_decoder_layers=2, d_ff=32, max_len=16)
        >>> session = DecodingSession(Transformer(cfg).eval(), src_ids=[5, 6, 7, 2], top_k=3)
        >>> step = session.step()              # one token, the argmax
        >>> step.top_ids[0] == step.token, len(step.top_ids)
        (True, 3)
        >>> [w.shape for w in step.cross_attention]     # per decoder layer: (H, S), this step's row
        [torch.Size([4, 4]), torch.Size([4, 4])]
        >>> session.back()                     # undo it
        >>> step = session.step(force=9)       # take token 9 instead, and continue from there
        >>> session.tokens
        [9]
        >>> tokens = session.run()             # to eos or the length limit
        >>> tokens[0], session.finished
        (9, True)
    """

    def __init__(
        self,
        model: Seq2SeqModel,
        src_ids: list[int],
        top_k: int = 5,
        max_new_tokens: int | None = None,
        interventions: Interventions | None = None,
    ):
        if not src_ids:
            raise ValueError("the source is empty")
        self.model = model
        self.src_ids = list(src_ids)
        self.top_k = max(1, min(top_k, model.config.tgt_vocab_size))
        self.max_new_tokens = _max_new_tokens(model, max_new_tokens)
        # Held for every step: ablated heads stay ablated, and an edit acts when its step comes.
        self.interventions = _checked(model, interventions)
        device = next(model.parameters()).device
        with torch.no_grad():
            enc = model.encode(
                torch.tensor([self.src_ids], device=device), output_attentions=True, interventions=self.interventions
            )
            # per encoder layer: (H, S), ||v_j W_o^h|| for each head and source position
            self.encoder_value_norms = [norms[0].float().cpu() for norms in model.encoder_value_norms(enc)]
        self._memory, self._src_mask = enc.memory, enc.src_mask
        # What a session records is kept on the CPU in float32 (where the views read it), whatever the model's device.
        self.encoder_attention = [w[0].float().cpu() for w in enc.attentions]  # per encoder layer: (H, S, S)
        self.steps: list[Step] = []
        self._cache: Cache | None = None  # covers the decoder inputs bos, steps[0].token, ..., steps[-2].token

    @property
    def tokens(self) -> list[int]:
        return [s.token for s in self.steps]

    @property
    def finished(self) -> bool:
        if not self.steps:
            return False
        return self.steps[-1].token == self.model.config.eos_id or len(self.steps) >= self.max_new_tokens

    @torch.no_grad()
    def step(self, force: int | None = None) -> Step:
        """Decode one token: the argmax, or `force` (a target id) to ask "what if the model had said this?"."""
        if self.finished:
            raise ValueError("decoding has finished; step back or reset first")
        cfg = self.model.config
        if force is not None and not 0 <= force < cfg.tgt_vocab_size:
            raise ValueError(f"forced token must be a target id below {cfg.tgt_vocab_size} (got {force})")
        step_index = len(self.steps)
        if force is not None and not self.can_write(force, step_index + 1):  # checked first: nothing changes
            raise ValueError(f"the model never writes token {force} at step {step_index + 1} (pad, bos, or not there)")
        previous = self.steps[-1].token if self.steps else cfg.bos_id
        next_input = torch.tensor([[previous]], device=self._memory.device)
        dec = self.model.decode(
            next_input,
            self._memory,
            self._src_mask,
            self._cache,
            use_cache=True,
            output_attentions=True,
            interventions=self.interventions,
        )
        probs = next_token_logits(self.model, dec.hidden[0, -1], step_index, self.max_new_tokens).softmax(dim=-1)
        top_probs, top_ids = probs.topk(self.top_k)
        token = int(top_ids[0]) if force is None else force
        step = Step(
            token=token,
            forced=force is not None and force != int(top_ids[0]),
            prob=float(probs[token]),
            top_ids=top_ids.tolist(),
            top_probs=top_probs.tolist(),
            self_attention=[w[0, :, -1].float().cpu() for w in dec.self_attentions],
            cross_attention=[w[0, :, -1].float().cpu() for w in dec.cross_attentions],
        )
        self._cache = dec.cache
        self.steps.append(step)
        return step

    def fork(self) -> DecodingSession:
        """A session that goes on from here on its own: it shares the model and the encoding, has its own list of
        steps, and starts from the same cache (a cache is never changed in place: a step makes a new one), so
        stepping either leaves the other as it is. For decoding a step ahead while this one is being looked at."""
        forked = copy.copy(self)
        forked.steps = list(self.steps)
        return forked

    def can_write(self, token: int, step: int) -> bool:
        """Whether the model may write `token` at step `step` (1-based): not pad or bos, nor what its rules forbid
        there (a token another model forces first, say), so a what-if can be refused before anything changes."""
        if not 0 <= token < self.model.config.tgt_vocab_size:
            return False
        logits = torch.zeros(self.model.config.tgt_vocab_size, device=self._memory.device)
        return bool(self.model.rules.apply(logits, step - 1, self.max_new_tokens)[token].isfinite())

    @torch.no_grad()
    def decoder_value_norms(self, start: int = 0, cross: bool = True) -> tuple[list[torch.Tensor], list[torch.Tensor]]:
        """||v_j W_o^h|| for the decoder's keys, read from the KV cache the steps used (Kobayashi et al. 2020).

        Returns per decoder layer: self-attention (H, P - start) over the decoder inputs start..P-1 so far (step t's
        keys are the first t), and if `cross` the cross-attention (H, S). Both lists are empty before the first step.
        """
        if self._cache is None:
            return [], []
        self_norms, cross_norms = self.model.decoder_value_norms(self._cache, start, cross)
        return [n[0] for n in self_norms], [n[0] for n in cross_norms]

    def back(self) -> None:
        """Undo the last step (nothing to undo is not an error)."""
        if not self.steps:
            return
        self.steps.pop()
        self._cache = self._cache.truncate(len(self.steps)) if self.steps else None

    def rewind(self, n_steps: int) -> None:
        """Keep only the first n_steps steps, e.g. to force a different token at step n_steps."""
        while len(self.steps) > max(0, n_steps):
            self.back()

    def reset(self) -> None:
        self.rewind(0)

    def run(self) -> list[int]:
        """Step until eos or the length limit; returns the tokens (eos included when reached)."""
        while not self.finished:
            self.step()
        return self.tokens
