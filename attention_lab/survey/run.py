"""A head survey over a corpus: the plain greedy decoding and its score, every head's attention statistics, the
score with each head alone ablated, and the pruning curves. Returns survey.json's contents (see report.py)."""

from __future__ import annotations

import time
from collections.abc import Callable

from transformer import Head, Seq2SeqPipeline
from transformer.hub import default_limit

from ..core.naming import all_heads
from .corpus import Corpus
from .decoding import batches, decode_sets, decoded_steps
from .processes import Processes
from .pruning import curves, pruning_order
from .scoring import metric_for
from .statistics import add_totals, batch_totals, empty_totals, head_statistics


def survey(
    pipeline: Seq2SeqPipeline,
    corpus: Corpus,
    name: str,
    alignment: str | None = None,
    processes: Processes | None = None,
    progress: Callable | None = None,
) -> dict:
    """The survey of `pipeline` (called `name`) over `corpus`; alignment names the gold alignment its card gives
    ("reversal"), which also makes the score exact match. `progress(total)` returns a bar (tqdm's update and total)
    counting sentence decodings, or None."""
    started = time.perf_counter()
    processes = processes or Processes()
    model, heads = pipeline.model, all_heads(pipeline.model.config)
    metric = metric_for(corpus, pipeline.tokenizer.is_character_level, alignment == "reversal")
    work = batches(corpus.sources)
    alone = [frozenset()] + [frozenset({head}) for head in heads]
    mine = sum(len(work[i]) for i in processes.mine(len(work)))  # this process's sentences: what its bar counts
    bar = progress(mine * len(alone)) if progress else None
    texts, totals = _plain_and_alone(pipeline, work, alone, alignment, processes, bar)
    plain = texts[0]
    scores = {heads_set: metric.score(t, plain) for heads_set, t in zip(alone, texts)}
    importance = {head: scores[frozenset({head})] for head in heads}
    order = pruning_order(importance)
    planned = curves(order)
    todo = sorted({s for points in planned.values() for _, s in points} - set(scores), key=sorted)
    if bar is not None:
        bar.total += mine * len(todo)
        bar.refresh()
    for heads_set, t in zip(todo, _decoded_texts(pipeline, work, todo, processes, bar)):
        scores[heads_set] = metric.score(t, plain)
    if bar is not None:
        bar.close()
    points = {
        kind: [{"fraction": f, "heads": len(s), "score": round(scores[s], 4)} for f, s in kind_points]
        for kind, kind_points in planned.items()
    }
    statistics = head_statistics(totals, model)
    for head in heads:
        statistics[head.kind][head.layer][head.head]["importance"] = round(importance[head], 4)
    return {
        "model": name,
        "sentences": len(corpus.sources),
        "score": {"name": metric.name, "value": round(scores[frozenset()], 4)},
        "heads": statistics,
        "pruning": points.pop("all"),
        "pruning_by_kind": points,
        "pruning_order": [_named(head) for head in order],
        "seconds": round(time.perf_counter() - started, 2),
        "processes": processes.world,
        "device": str(next(model.parameters()).device),
        "dtype": str(next(model.parameters()).dtype).removeprefix("torch."),
    }


def _plain_and_alone(pipeline, work: list[list[str]], alone: list, alignment, processes: Processes, bar):
    """The corpus decoded plainly and with each head alone ablated (per set, the texts), and the attention sums of
    the plain decoding, gathered from every process."""
    model = pipeline.model
    decoded, totals = {}, empty_totals(model)
    for i in processes.mine(len(work)):
        src = pipeline.encode_batch(work[i])
        # The plain decoding in a batch of its own, as training.evaluate decodes it; then every head alone.
        decoded[i] = decode_sets(pipeline, src, alone[:1]) + decode_sets(pipeline, src, alone[1:])
        limit = min(default_limit(src), model.config.max_new_tokens)
        steps = [decoded_steps(tokens, limit, model.config.eos_id) for tokens in decoded[i][0]]
        add_totals(totals, batch_totals(model, src, steps, alignment))
        _advance(bar, len(work[i]) * len(alone))
    texts = _texts(pipeline, processes.gather(decoded), len(alone))
    return texts, _summed(processes.gather({processes.rank: totals}))


def _decoded_texts(pipeline, work: list[list[str]], sets: list, processes: Processes, bar) -> list[list[str]]:
    """Per set of ablated heads, the corpus decoded with them ablated, gathered from every process."""
    decoded = {}
    for i in processes.mine(len(work)):
        decoded[i] = decode_sets(pipeline, pipeline.encode_batch(work[i]), sets)
        _advance(bar, len(work[i]) * len(sets))
    return _texts(pipeline, processes.gather(decoded), len(sets))


def _texts(pipeline: Seq2SeqPipeline, decoded: dict, n_sets: int) -> list[list[str]]:
    """Per set of ablated heads, the corpus's decoded texts in corpus order, from {batch index: per set, token
    lists}."""
    decode = pipeline.tokenizer.decode
    return [[decode(tokens) for i in sorted(decoded) for tokens in decoded[i][k]] for k in range(n_sets)]


def _summed(parts: dict) -> dict:
    totals = None
    for part in parts.values():
        totals = part if totals is None else add_totals(totals, part)
    return totals


def _named(head: Head) -> dict:
    return {"kind": head.kind, "layer": head.layer, "head": head.head}


def _advance(bar, n: int) -> None:
    if bar:
        bar.update(n)
