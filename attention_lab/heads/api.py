"""The head tests as endpoints: /heads (every head summarised), /ablate (heads removed throughout) and /edit (cross
heads pointed at one source token at one step). Heads are written "kind:layer:head", 1-based, "*" for all."""

from __future__ import annotations

from dataclasses import dataclass

from ..checks import InputError, as_int, quoted
from ..core.attention_export import TopToken, top_k_record
from ..core.naming import parse_heads
from ..core.summaries import head_summaries
from ..feature import Endpoint, Limits
from ..request import Request
from .ablation import ablated_session, ablation_effects
from .editing import edit_session, point_weights


@dataclass
class HeadSummary:
    entropy: float | None  # the mean row entropy, nats
    special: float | None  # the mean weight on the model's special tokens
    alignment: float | None  # gold alignment accuracy (cross heads, where a gold alignment is known)


@dataclass
class HeadSummaries:
    """[layer][head] per kind."""

    encoder: list[list[HeadSummary]]
    decoder_self: list[list[HeadSummary]]
    cross: list[list[HeadSummary]]


@dataclass
class AblatedStep:
    step: int
    token: str  # the token the original decoding wrote
    kl: float  # KL(original ‖ ablated) of the next-token distribution, nats
    top_k: list[TopToken]  # the ablated distribution's


@dataclass
class Ablation:
    output_text: str  # decoded with the heads ablated throughout
    steps: list[AblatedStep]  # one per step of the original greedy decoding


@dataclass
class Edit:
    token: str  # what the model writes at the step with the heads edited
    probability: float
    top_k: list[TopToken]
    output_text: str  # decoding on greedily with no further edit


def heads(request: Request, model: str, text: str) -> HeadSummaries:
    """Decode `text` greedily; {"encoder"|"decoder_self"|"cross": [layer][head] -> {"entropy", "special",
    "alignment"}}: mean row entropy in nats, mean weight on the model's special tokens (pad, start, end and its
    tokenizer's own), gold alignment accuracy or null."""
    run = request.run(model, text)
    run.session.run()
    summaries = head_summaries(run.session, run.entry.alignment)
    return HeadSummaries(**{kind: [[HeadSummary(**cell) for cell in layer] for layer in grid]
                            for kind, grid in summaries.items()})  # fmt: skip


def ablate(request: Request, model: str, text: str, heads: list[str]) -> Ablation:
    """Ablate `heads` ("kind:layer:head", 1-based, "*" for all) throughout: {"output_text", "steps": [{"step",
    "token", "kl", "top_k"}]}, one entry per step of the original greedy decoding."""
    run = request.run(model, text)
    session, tokenizer = run.session, run.pipeline.tokenizer
    chosen = parse_heads(heads, session.model.config)
    tokens = session.run()
    effects = ablation_effects(session.model, session.src_ids, tokens, chosen, session.top_k, session.max_new_tokens)
    steps = [
        AblatedStep(
            e.step, tokenizer.id_to_token(e.token), round(e.kl, 6), top_k_record(tokenizer, e.top_ids, e.top_probs)
        )
        for e in effects
    ]
    return Ablation(tokenizer.decode(ablated_session(session, chosen).tokens), steps)


def edit(request: Request, model: str, text: str, step: int, position: int, heads: list[str]) -> Edit:
    """At `step` (1-based) the listed cross heads look only at source token `position` (1-based): {"token",
    "probability", "top_k", "output_text"}, decoding on greedily with no further edit."""
    run = request.run(model, text)
    session, tokenizer = run.session, run.pipeline.tokenizer
    chosen = parse_heads(heads, session.model.config, kinds=("cross",))
    if not chosen:
        raise InputError('List the cross-attention heads to edit, such as "cross:2:*" ("cross:*:*" for all).')
    session.run()
    n_steps, n_source = len(session.steps), len(session.src_ids)
    at, where = as_int(step), as_int(position)
    if at is None or not 1 <= at <= n_steps:
        raise InputError(
            f"Step must be a whole number from 1 to {n_steps}, this decoding's steps (got {quoted(step)})."
        )
    if where is None or not 1 <= where <= n_source:
        raise InputError(
            f"Position must be a whole number from 1 to {n_source}, the source tokens (got {quoted(position)})."
        )
    edited = edit_session(session, at, point_weights(n_source, [where - 1]), chosen)
    taken = edited.steps[at - 1]
    top_k = top_k_record(tokenizer, taken.top_ids, taken.top_probs)
    return Edit(tokenizer.id_to_token(taken.token), round(taken.prob, 6), top_k, tokenizer.decode(edited.tokens))


ENDPOINTS = (
    Endpoint(
        "heads", heads, HeadSummaries, "Every head of every kind summarised over the greedy decoding.", Limits(64, 64)
    ),
    Endpoint("ablate", ablate, Ablation, "What ablating heads throughout changes, step by step.", Limits(64, 64)),
    Endpoint("edit", edit, Edit, "Cross heads pointed at one source token at one step.", Limits(64, 64)),
)
