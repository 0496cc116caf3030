"""Which output to trust, as an endpoint: /score, any translation forced on the decoder and scored token by token."""

from __future__ import annotations

from ..checks import InputError, check_source, is_blank, quoted
from ..feature import Endpoint, Limits
from ..request import Request
from .messages import MAX_TRANSLATION, ScoreRecord, checked_method, score_record, target_ids


def score(request: Request, model: str, source: str, translation: str, method: str = "alti") -> ScoreRecord:
    """Score a translation of `source`: its tokens (as the model's target side tokenizes them, then the end token)
    are forced on the decoder, and each step gives log p of the token under the model's own rules (null: the model
    would never write it there), its source share, and a value per source token and per decoder input by `method`:
    "alti" (ALTI+: contributions, non-negative, adding up to 1) or one of /attribute's methods. An empty
    `translation` scores the model's own greedy output. {"source_tokens", "target_tokens", "method", "steps":
    [{"step", "token", "logp", "source_share", "source", "prefix"}], "sentence": {"mean_logp", "source_share",
    "coverage", "uncovered": [source words], "wass_to_unif": [per decoder layer], "wass_to_data": [per decoder
    layer], "wass_combo"}, "flags": [{"kind", "at", "message"}]}: coverage is the share of source words that
    cross-attention (mean over layers and heads) reads for at least 0.35 of a step over the whole translation;
    wass_to_unif and wass_to_data (Guerreiro et al. 2023) are how far each decoder layer's source attention mass (mean
    over heads, then over steps) lies from uniform and from correct translations', and wass_combo the two combined
    for the last layer: higher is more suspicious; wass_to_data and wass_combo are null for a model without correct
    translations to compare with (only the bundled de-en model has them). Flags are "forbidden", "uncovered" (at: the
    source word, 1-based), "low_source" and "end_collapse" (at: the step). The translation may be at most 128
    tokens, its end token included."""
    checked_method(method)
    request.within(model, source)
    if translation is not None and not isinstance(translation, str):
        raise InputError(f"The translation must be text (got {quoted(translation)}).")
    if translation is None or is_blank(translation):
        run = request.run(model, source)
        tokens = run.session.run()
        return score_record(run.pipeline, run.session.src_ids, list(tokens), method, limit=run.session.max_new_tokens)
    pipeline = request.entry(model).pipeline
    src_ids, tokens = check_source(pipeline, source)[0], target_ids(pipeline, translation)
    return score_record(pipeline, src_ids, list(tokens), method)


SCORE = Endpoint(
    "score", score, ScoreRecord, "A translation scored token by token by the model that reads the source.",
    Limits(64, MAX_TRANSLATION),
)  # fmt: skip
