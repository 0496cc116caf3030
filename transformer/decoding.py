"""Greedy and beam-search decoding with a KV cache, and a step-by-step session that records what the model saw.

Beam search is in transformer.beams (and named here too). Every function here runs the decoder on the new position only and keeps earlier keys/values in the model's cache,
so a step costs one position rather than a re-run of the prefix. greedy_decode and beam_search return token lists
without bos and eos; a DecodingSession's tokens end with eos once the model has written it.

They drive any model that meets transformer.contract.Seq2SeqModel: ours, and the adapters' models.

Dimension key: B batch, k beams, H heads, S source positions, P positions decoded so far, V vocabulary.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass

import torch

from .contract import Cache, Seq2SeqModel
from .interventions import Interventions, held
from .next_token import _checked, _max_new_tokens, next_token_logits


def _strip(ids: list[int], eos_id: int) -> list[int]:
    return ids[: ids.index(eos_id)] if eos_id in ids else ids


@torch.no_grad()
def greedy_decode(
    model: Seq2SeqModel,
    src: torch.Tensor,
    max_new_tokens: int | None = None,
    interventions: Interventions | None = None,
) -> list[list[int]]:
    """Decode a padded batch src (B, S) greedily; returns B token lists (no bos/eos).

    `interventions` ablates heads throughout and applies cross-attention edits at their steps. Hooks active around
    the call (transformer.hooks) act at every model call too: a source's embeddings replaced with noisy ones, say.
    """
    steps = _max_new_tokens(model, max_new_tokens)
    with held(_checked(model, interventions)):
        return _greedy(model, src, steps)


def _greedy(model: Seq2SeqModel, src: torch.Tensor, steps: int) -> list[list[int]]:
    cfg = model.config
    enc = model.encode(src)
    B = src.size(0)
    next_input = torch.full((B, 1), cfg.bos_id, dtype=torch.long, device=src.device)
    finished = torch.zeros(B, dtype=torch.bool, device=src.device)
    cache: Cache | None = None
    out = []
    for step in range(steps):
        dec = model.decode(next_input, enc.memory, enc.src_mask, cache, use_cache=True)
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
        with torch.no_grad(), held(self.interventions):
            enc = model.encode(torch.tensor([self.src_ids], device=device), output_attentions=True)
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
        with held(self.interventions):
            dec = self.model.decode(
                next_input, self._memory, self._src_mask, self._cache, use_cache=True, output_attentions=True
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


# Beam search lives in its own module; it is named here too, where callers have always imported it from.
from .beams import (
    BeamResult,
    _Row,  # noqa: F401  (the row of a search, as it was named here)
    beam_search,
    length_normalise,
)

__all__ = [
    "BeamResult",
    "DecodingSession",
    "Step",
    "beam_search",
    "greedy_decode",
    "length_normalise",
    "next_token_logits",
]
