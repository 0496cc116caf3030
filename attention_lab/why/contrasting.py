"""Why this token and not that one, in the page: a candidate's "why not this?" (decoding/candidates.mjs) asks for
the contrast of the token written at the shown step against it; the Why tab opens on it and draws it
(why/contrast.mjs), with the tab's method and aggregate. One request answers the click, filled after it as the
tab's attribution is; redraws (Show step, words, a way back to the plain attribution) are the page's own.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

from ..attribution.methods import AGGREGATES, METHODS, no_gradients, titled
from ..core.units import token_label
from ..feature import slow_value
from ..run.state import Run, interventions_key
from .contrast import ContrastError, contrast_step
from .messages import ContrastMessage, ContrastNotes, significant

SLOW = "Attributing the difference of the two logits…"


@dataclass(frozen=True)
class Asked:
    step: int  # 1-based
    alternative: int  # a token id
    written: tuple[int, ...]  # the tokens up to the step when it was asked: another decoding there drops it


def contrast_view(run: Run, method: str, aggregate: str, asked: Asked | None) -> tuple:
    """The contrast output's (key, how to make it): None while none is asked, or when the decoding no longer wrote
    what it was asked about."""
    session = run.session
    if asked is None or tuple(session.tokens[: asked.step]) != asked.written:
        return None, lambda: None
    held = (interventions_key(session), session.max_new_tokens)
    key = (run.serial, run.entry.name, tuple(session.src_ids), asked, method, aggregate, held)
    return key, contrast_message(run, method, aggregate, asked)


def contrast_message(run: Run, method: str, aggregate: str, asked: Asked) -> Callable[[], ContrastMessage]:
    """How to make the contrast's message for the page (what it needs is taken now, under the user's lock)."""
    session, tokenizer = run.session, run.pipeline.tokenizer
    model, src_ids, tokens = session.model, list(session.src_ids), list(session.tokens)
    limit, interventions, special = session.max_new_tokens, session.interventions, session.model.special_ids

    def make() -> ContrastMessage:
        label = token_label(tokenizer, asked.alternative, special)
        notes = ContrastNotes(METHODS[method].note, AGGREGATES[aggregate])
        message = ContrastMessage(asked.step, list(asked.written), label, asked.alternative,
                                  titled(method, aggregate), aggregate, notes)  # fmt: skip

        def filled() -> ContrastMessage:
            c = contrast_step(model, src_ids, tokens, asked.step, asked.alternative, method, aggregate, limit,
                              interventions, name=f"“{label}”")  # fmt: skip
            message.difference, message.source, message.prefix = (
                round(c.difference, 5), significant(c.source), significant(c.prefix)
            )  # fmt: skip
            return message

        told = {ContrastError: str, RuntimeError: no_gradients}
        return slow_value("The contrast", filled, lambda line: replace(message, error=line), told)

    return make
