"""A decoding's attention as the page receives it: every kind, layer and head, once per Run, and a step at a time
after it. The page (assets/units.mjs and the views) draws any step, head, unit, reading and colour scale from it
without asking the server again.

What is sent (Decoding, a typed record like every message the page is sent: attention_lab.messages): the source and
output tokens with their labels (pieces and words), the special flags and the word each piece belongs to (the merge
is decided here, by attention_lab.core.units); every head's weights; what the readings need (value norms;
rollout through the encoder and the decoder, computed by transformer.readings); each step's token, its probability
and the top k. Weights and rollout shares lie in [0, 1] and travel as 16-bit integers, round(w · 65535): each is
within 7.7e-6 of the computed value. Value norms travel as 32-bit floats. Arrays are base64 of their little-endian
bytes, shape known from the layers, heads and tokens. The messages that carry a decoding to the page, a step more
or fewer, are attention_lab.decoding.messages'.
"""

from __future__ import annotations

import base64
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch

from transformer import DecodingSession, Seq2SeqTokenizer
from transformer.decoding import Step
from transformer.readings import rollout

from .units import piece_label, token_label, word_groups, word_label

SCALE = 65535  # a weight w in [0, 1] is sent as round(w * SCALE)
Candidate = tuple[str, int, float]  # a what-if choice: its label, its token id, its probability


@dataclass
class Tokens:
    """Tokens as the views label and merge them, one entry per piece."""

    labels: list[str]  # in the pieces view ("##" continues a word; a special token as it is)
    words: list[str]  # the label of its word as far as this piece (a prefix's last word may be cut short)
    group: list[int]  # the index of its word
    special: list[bool]  # a special token (by id): hidden on request, never merged into a word


@dataclass
class Piece:
    """One more piece of a sequence of Tokens (a step more)."""

    labels: str
    words: str
    group: int
    special: bool


@dataclass
class StepData:
    """One step of a decoding: its token and choices, and its rows of every head's weights."""

    token: int  # its id (-1 where it is not known: weights given without a model)
    label: str
    forced: bool  # chosen by a what-if rather than by the decoding
    prob: float
    top: list[Candidate]  # likeliest first
    cross: str  # 16-bit weights (L, H, S)
    self: str  # 16-bit weights (L, H, t + 1)
    self_norms: str | None  # 32-bit ||v W_o|| of its new key (L, H); null: weights alone were given
    self_rollout: str  # 16-bit (L, t + 1): its row of the decoder self-attention's rollout


@dataclass
class Original:
    """The decoding before a what-if, ablation, edit or branch, compared beside it (its cross-attention alone)."""

    out: Tokens
    cross: list[str]  # per step, 16-bit (L, H, S)
    at: int  # the step (1-based) the change first changed


@dataclass
class Decoding:
    """Everything the page draws a decoding from."""

    model: str
    layers: tuple[int, int]  # encoder, decoder
    heads: int
    character_level: bool
    bos: str  # the decoder's start token, as labelled
    src: Tokens
    out: Tokens
    encoder: str  # 16-bit (L, H, S, S)
    encoder_norms: str | None  # 32-bit (L, H, S); null: weights alone were given
    encoder_rollout: str  # 16-bit (L, S, S)
    cross_norms: str | None  # 32-bit (L, H, S); null before the first step, or without values
    steps: list[StepData]
    original: Original | None = None
    interventions: bool = False  # heads ablated or edited: the page decodes on only a decoding without them


@dataclass
class Word:
    """A source word as a view shows it: its label and the token positions of its pieces."""

    label: str
    pieces: list[int]


@dataclass
class StepDelta:
    """A session's last step, for a page that holds the steps before it."""

    step: StepData
    out: Piece
    cross_norms: str | None  # sent with the first step (the cross values never change after it)


def q16(array) -> str:
    """Weights in [0, 1] as base64 of little-endian uint16, round(w * 65535), in C order."""
    values = np.asarray(array, dtype=np.float64)
    return base64.b64encode(np.round(np.clip(values, 0.0, 1.0) * SCALE).astype("<u2").tobytes()).decode("ascii")


def f32(array) -> str:
    """Any numbers as base64 of little-endian float32, in C order."""
    return base64.b64encode(np.asarray(array, dtype="<f4").tobytes()).decode("ascii")


def stacked(tensors: Sequence[torch.Tensor]) -> np.ndarray:
    return np.stack([t.detach().cpu().float().numpy() for t in tensors])


def sequence(tokenizer: Seq2SeqTokenizer, ids: Sequence[int], special_ids: frozenset[int]) -> Tokens:
    """Tokens as the views label and merge them: per piece its label in the pieces view ("##" continues a word), the
    label of its word as far as this piece (a prefix's last word may be cut short), the index of its word, and
    whether it is a special token (by id)."""
    return labelled(tokenizer.tokens(ids), [i in special_ids for i in ids], tokenizer.is_character_level)


def labelled(pieces: list[str], special: list[bool], character_level: bool = False) -> Tokens:
    """Pieces (as the tokenizer spells them) as `sequence` gives them: labels, words, word index, special."""
    groups = word_groups(pieces, special, character_level)
    labels, words, group = [], [], []
    for g, members in enumerate(groups):
        for k, i in enumerate(members):
            labels.append(piece_label(pieces[i], k == 0, special[i]))
            words.append(pieces[i] if special[i] else word_label([pieces[j] for j in members[: k + 1]]))
            group.append(g)
    return Tokens(labels, words, group, list(special))


def candidates(step: Step, tokenizer: Seq2SeqTokenizer, special_ids: frozenset[int]) -> list[Candidate]:
    """The what-if choices of a step: [label, token id, probability], likeliest first; a token the model may not
    write there (probability exactly 0, as every token but BART's forced first) is left out."""
    return [
        (token_label(tokenizer, t, special_ids), t, round(p, 6))
        for t, p in zip(step.top_ids, step.top_probs)
        if p > 0.0
    ]


def _step(
    session: DecodingSession, tokenizer: Seq2SeqTokenizer, t: int, self_norms: np.ndarray, rolled: np.ndarray
) -> StepData:
    """Step t (0-based) of the session: its token and choices, its weights, its new key's norms (L, H) and its row of
    the decoder's self-attention rollout (L, t + 1)."""
    step, special = session.steps[t], session.model.special_ids
    return StepData(
        token=step.token,
        label=token_label(tokenizer, step.token, special),
        forced=step.forced,
        prob=round(step.prob, 6),
        top=candidates(step, tokenizer, special),
        cross=q16(stacked(step.cross_attention)),  # (L, H, S)
        self=q16(stacked(step.self_attention)),  # (L, H, t + 1)
        self_norms=f32(self_norms),
        self_rollout=q16(rolled),
    )


def self_rollout(session: DecodingSession, upto: int) -> np.ndarray:
    """The decoder self-attention's rollout over the first `upto` steps, (L, upto, upto): row t depends on steps
    0..t only (the attention is causal), so a step adds one row and changes none."""
    first = session.steps[0].self_attention
    weights = torch.zeros(len(first), first[0].size(0), upto, upto)
    for t, step in enumerate(session.steps[:upto]):
        for layer, row in enumerate(step.self_attention):
            weights[layer, :, t, : t + 1] = row.float()
    return torch.stack(rollout(list(weights))).numpy()


def full(session: DecodingSession, tokenizer: Seq2SeqTokenizer, model_name: str, before=None) -> Decoding:
    """Everything the page draws a decoding from. `before` (its `steps` and the step `at` which it changed): the
    decoding before a what-if, ablation or edit, compared beside it."""
    config, special = session.model.config, session.model.special_ids
    n = len(session.steps)
    self_norms, cross_norms = session.decoder_value_norms()
    norms = stacked(self_norms) if n else None  # (L, H, T): each step's keys' value norms, stacked once
    rolled = self_rollout(session, n) if n else None
    original = None
    if before is not None and before.steps:
        out = sequence(tokenizer, [s.token for s in before.steps], special)
        original = Original(out, [q16(stacked(s.cross_attention)) for s in before.steps], before.at)
    return Decoding(
        model=model_name,
        layers=(config.n_encoder_layers, config.n_decoder_layers),
        heads=config.n_heads,
        character_level=bool(tokenizer.is_character_level),
        bos=piece_label(tokenizer.id_to_token(config.bos_id), True, True),
        src=sequence(tokenizer, session.src_ids, special),
        out=sequence(tokenizer, [s.token for s in session.steps], special),
        encoder=q16(stacked(session.encoder_attention)),
        encoder_norms=f32(stacked(session.encoder_value_norms)),
        encoder_rollout=q16(torch.stack(rollout(list(session.encoder_attention))).numpy()),
        cross_norms=f32(stacked(cross_norms)) if cross_norms else None,
        steps=[_step(session, tokenizer, t, norms[:, :, t], rolled[:, t, : t + 1]) for t in range(n)],
        original=original,
        interventions=bool(session.interventions),
    )


def step_delta(session: DecodingSession, tokenizer: Seq2SeqTokenizer) -> StepDelta:
    """The session's last step as one step more for a page that holds the steps before it."""
    t = len(session.steps) - 1
    special = session.model.special_ids
    self_norms, cross_norms = session.decoder_value_norms(start=t, cross=t == 0)
    out = sequence(tokenizer, [s.token for s in session.steps], special)
    piece = Piece(out.labels[-1], out.words[-1], out.group[-1], out.special[-1])
    step = _step(session, tokenizer, t, stacked(self_norms)[:, :, 0], self_rollout(session, t + 1)[:, t])
    return StepDelta(step, piece, f32(stacked(cross_norms)) if cross_norms else None)
