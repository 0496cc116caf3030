"""Why this token as JSON: the /attribute, /contrast and /lens answers, tokens and steps as in /attention."""

from __future__ import annotations

import math

from transformer import DecodingSession, Seq2SeqTokenizer
from transformer.lens import decoder_lens

from ..checks import InputError, as_int, quoted
from .attribution import AGGREGATES, METHODS, attribute, no_gradients
from .contrast import ContrastError, contrast_step, token_id

LENS_TOP_K = 5


def _rounded(values, decimals: int = 6) -> list[float]:
    return [round(float(v), decimals) for v in values]


def checked(method: str, aggregate: str) -> None:
    """InputError, in one line, for a method or an aggregate attribution does not have."""
    if not isinstance(method, str) or method not in METHODS:
        raise InputError(f"Unknown method {method!r}: use one of {', '.join(METHODS)}.")
    if not isinstance(aggregate, str) or aggregate not in AGGREGATES:
        raise InputError(f"Unknown aggregate {aggregate!r}: use one of {', '.join(AGGREGATES)}.")


def attribution_record(
    session: DecodingSession, tokenizer: Seq2SeqTokenizer, method: str, aggregate: str = "sum"
) -> dict:
    """Every step of the session's decoding attributed by `method`, aggregated over the embedding by `aggregate`:
    {"source_tokens", "method", "aggregate", "note", "steps": [{"step", "token", "source", "prefix",
    "source_share"}]} (values per token; see METHODS and AGGREGATES for their meaning)."""
    checked(method, aggregate)
    try:
        steps = attribute(
            session.model,
            session.src_ids,
            session.tokens,
            method,
            limit=session.max_new_tokens,
            interventions=session.interventions,
            aggregate=aggregate,
        )
    except RuntimeError as err:  # a model whose forward pass autograd cannot differentiate
        raise InputError(no_gradients(err)) from err
    return {
        "source_tokens": tokenizer.tokens(session.src_ids),
        "method": method,
        "aggregate": aggregate,
        "note": f"{METHODS[method].note} {AGGREGATES[aggregate]}",
        "steps": [
            {
                "step": a.step,
                "token": tokenizer.id_to_token(a.token),
                "source": _rounded(a.source),
                "prefix": _rounded(a.prefix),
                "source_share": None if math.isnan(a.source_share) else round(a.source_share, 6),
            }
            for a in steps
        ],
    }


def lens_record(session: DecodingSession, tokenizer: Seq2SeqTokenizer, k: int = LENS_TOP_K) -> dict:
    """Per step and decoder layer (1-based, in order), the top k tokens the decoder would write if it stopped
    after that layer: {"steps": [{"step", "token", "settled", "layers": [{"layer", "top_k": [{"token",
    "probability"}]}]}]}; "settled" is the first layer from which on the written token is the top one (null if
    none: a forced token)."""
    lens = decoder_lens(
        session.model, session.src_ids, session.tokens, k, session.max_new_tokens, session.interventions
    )
    return {
        "steps": [
            {
                "step": t + 1,
                "token": tokenizer.id_to_token(token),
                "settled": None if lens.settled[t] is None else lens.settled[t] + 1,
                "layers": [
                    {
                        "layer": layer + 1,
                        "top_k": [
                            {"token": tokenizer.id_to_token(int(i)), "probability": round(float(p), 6)}
                            for i, p in zip(lens.top_ids[layer, t], lens.top_probs[layer, t])
                        ],
                    }
                    for layer in range(lens.top_ids.size(0))
                ],
            }
            for t, token in enumerate(session.tokens)
        ]
    }


def contrast_record(
    session: DecodingSession, tokenizer: Seq2SeqTokenizer, step, alternative, method: str, aggregate: str
) -> dict:
    """Why the session's token at `step` (1-based) and not `alternative` (spelled as the candidates spell it):
    {"step", "token", "alternative", "logit_difference", "source", "prefix"} (see why.contrast)."""
    checked(method, aggregate)
    n = len(session.tokens)
    at = as_int(step)
    if at is None or not 1 <= at <= n:
        raise InputError(f"Step must be a whole number from 1 to {n}, this decoding's steps (got {quoted(step)}).")
    spelled = alternative if isinstance(alternative, str) else ""
    other = token_id(tokenizer, spelled, session.model.config.tgt_vocab_size) if spelled else None
    if other is None:
        raise InputError(
            f"Unknown token {quoted(alternative)}: spell it as the candidates do (top_k in /attention), "
            f"such as {quoted(tokenizer.id_to_token(session.tokens[at - 1]))}."
        )
    try:
        c = contrast_step(
            session.model, session.src_ids, session.tokens, at, other, method, aggregate,
            session.max_new_tokens, session.interventions, name=quoted(spelled),
        )  # fmt: skip
    except ContrastError as err:
        raise InputError(str(err)) from err
    except RuntimeError as err:  # a model whose forward pass autograd cannot differentiate
        raise InputError(no_gradients(err)) from err
    return {
        "step": at,
        "token": tokenizer.id_to_token(c.token),
        "alternative": tokenizer.id_to_token(c.alternative),
        "logit_difference": round(c.difference, 6),
        "source": _rounded(c.source),
        "prefix": _rounded(c.prefix),
    }
