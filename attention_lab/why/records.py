"""Why this token as JSON: the /attribute and /lens answers, tokens and steps as in /attention."""

from __future__ import annotations

import math

from transformer import DecodingSession, Seq2SeqTokenizer
from transformer.lens import decoder_lens

from ..checks import InputError
from .attribution import METHODS, attribute, no_gradients

LENS_TOP_K = 5


def _rounded(values, decimals: int = 6) -> list[float]:
    return [round(float(v), decimals) for v in values]


def attribution_record(session: DecodingSession, tokenizer: Seq2SeqTokenizer, method: str) -> dict:
    """Every step of the session's decoding attributed by `method`: {"source_tokens", "method", "note", "steps":
    [{"step", "token", "source", "prefix", "source_share"}]} (values per token; see METHODS for their meaning)."""
    if method not in METHODS:
        raise InputError(f"Unknown method {method!r}: use one of {', '.join(METHODS)}.")
    try:
        steps = attribute(
            session.model,
            session.src_ids,
            session.tokens,
            method,
            limit=session.max_new_tokens,
            interventions=session.interventions,
        )
    except RuntimeError as err:  # a model whose forward pass autograd cannot differentiate
        raise InputError(no_gradients(err)) from err
    return {
        "source_tokens": tokenizer.tokens(session.src_ids),
        "method": method,
        "note": METHODS[method].note,
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
