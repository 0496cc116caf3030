"""Two models on one sentence as an endpoint: /compare_models, each model's cross-attention in words and how far
apart the two are at each output word they share."""

from __future__ import annotations

from ..checks import InputError
from ..feature import Endpoint, Limits
from ..models.registry import ModelEntry
from ..request import Request
from ..run.state import Run, new_run
from .messages import TwoModels, two_models_record
from .words import WordAttention, word_attention

SNAPSHOT = "@"  # MODEL@SNAPSHOT: a served model's training snapshot, as the Training tab labels it ("step 1,200")


def snapshot_of(request: Request, model: object) -> tuple[str, str] | None:
    """(model, snapshot label) where `model` names a served model's training snapshot (MODEL@SNAPSHOT); None for
    anything else (a served model's name, or one the registry's message names as unknown)."""
    if not isinstance(model, str) or model in request.shared.registry.entries or SNAPSHOT not in model:
        return None
    base, _, label = model.rpartition(SNAPSHOT)
    return base, label


def snapshot_run(request: Request, base: str, label: str, text: str) -> Run:
    """A fresh run of `text` on model `base`'s snapshot labelled `label`; InputError naming the snapshots there
    are, or what is wrong with the one asked for."""
    entry, snapshots = request.entry(base), request.shared.registry.snapshots
    snapshot = snapshots.named(base, label)
    pipeline = snapshots.pipeline(base, snapshot)
    if isinstance(pipeline, str):
        raise InputError(pipeline)
    request.within(base, text)  # a snapshot reads its source as its model does: the same tokenizer
    name = f"{base}{SNAPSHOT}{snapshot.label}"
    limit, new = pipeline.model.config.max_new_tokens, request.endpoint.limits.new
    snapshot_entry = ModelEntry(name, pipeline, snapshot.folder, trained_length=entry.trained_length)
    return new_run(snapshot_entry, text, max_len=limit if new is None else min(limit, new))


def fresh(request: Request, model: str, text: str) -> Run:
    """A fresh run of `text` on `model`, a served model or MODEL@SNAPSHOT, within the endpoint's limits."""
    snapshot = snapshot_of(request, model)
    return request.run(model, text) if snapshot is None else snapshot_run(request, *snapshot, text)


def decoded(request: Request, model: str, text: str) -> Run:
    """`text` decoded greedily by `model`, a served model or MODEL@SNAPSHOT, within the endpoint's limits."""
    run = fresh(request, model, text)
    run.session.run()
    return run


def in_words(request: Request, model: str, text: str) -> tuple[str, WordAttention]:
    """The model's name (a snapshot's as the Training tab labels it) and its decoding's cross-attention in words."""
    run = decoded(request, model, text)
    return run.entry.name, word_attention(run.session, run.pipeline)


def compare_models(request: Request, model_a: str, model_b: str, text: str) -> TwoModels:
    """Decode `text` greedily with two models and compare their cross-attention in words: {"source_words",
    "models": [A, B], "shared": [{"word", "a", "b", "distance"}]}; each of A and B is {"model", "output_tokens",
    "output_words", "attention": [output word][source word], "layers": [layer][output word][source word]}.
    source_words are model A's words of the source, output_words the output's, special tokens left out (the end
    token too); a word is the views' (pieces merged), spelled as it reads. A head's row for one output word is the
    mean over its pieces of their cross-attention, summed over each source word's pieces, special tokens dropped and
    renormalised; a row of attention is the mean of those over layers and heads (layers: over each layer's heads),
    as the Attention tab's mean of all heads with words merged and special tokens hidden: it sums to 1 over
    source_words.
    B's rows are over A's source words (split by the characters they share, where the two tokenizers read other
    words). shared: the output words the two outputs have in common, in order (difflib's matching blocks; a and b
    their indices), with the Jensen–Shannon distance (base 2, from 0 for identical rows to 1) between the two rows.
    A model is one the app serves, or MODEL@SNAPSHOT for its training snapshot as the Training tab labels it
    ("reverse@step 1,200"); the same model twice is allowed."""
    name_a, a = in_words(request, model_a, text)
    name_b, b = in_words(request, model_b, text)  # decoded again when it is model A: the distances 0 are measured
    return two_models_record(name_a, a, name_b, b)


COMPARE = Endpoint(
    "compare_models",
    compare_models,
    TwoModels,
    "Two models' cross-attention on one source, word by word, and how far apart at each shared word.",
    Limits(64, 64),
)
ENDPOINTS = (COMPARE,)
