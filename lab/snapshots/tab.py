"""What the Training tab shows, and the /training API's answer: a model's snapshots decoding the user's source."""

from __future__ import annotations

from ..attention import payload
from ..checks import InputError, check_source
from .chart import training_chart
from .decodings import SnapshotDecoding, Snapshots

NOTE = (
    "The same model at snapshots taken during its training, from the untrained start (step 0) to the model the other "
    "tabs show, decoding this source. Slide or play: the cross-attention below goes from a blur to the alignment it "
    "learned, while the chart shows the validation loss fall and, where the gold alignment is known (reversal), the "
    "best cross head's alignment on this source rise."
)


def record(snapshots: Snapshots, model: str, text: str) -> dict:
    """{"snapshots": [{"step", "output_text", "alignment", "loss"}]} in training order; a snapshot that could not be
    loaded has null output and alignment, and an "error" naming it."""
    return {"snapshots": [decoded.record() for decoded in snapshots.decodings(model, text)]}


def at_end(snapshots: Snapshots, model: str, index: object) -> bool:
    """Whether the slider shows the last snapshot (or the model has none to play)."""
    try:
        n = len(snapshots.listed(model))
    except InputError:
        return True
    try:
        return int(index) >= n - 1
    except (TypeError, ValueError):
        return True


def outputs(snapshots: Snapshots, model: str, text: str, max_len: int | None, index: object) -> dict:
    """The Training tab's outputs as name -> (key, how to make it): the slider, the film (every snapshot's decoding
    of the source, for the page to draw; slow), and the chart of the run's measures (slow). The page draws the shown
    snapshot's output, its line of measures and its cross-attention, and moves the chart's mark, as the slider
    moves."""
    try:
        n = len(snapshots.listed(model))
        check_source(snapshots.registry.entry(model).pipeline, text)
    except InputError as err:
        return _unavailable(model, str(err))
    i = max(0, min(int(index), n - 1)) if isinstance(index, (int, float)) else 0
    at = (model, text, max_len)
    slider = {"value": i, "maximum": max(n - 1, 1), "interactive": n > 1, "label": "Snapshot"}
    return {
        "snapshot": ((model, n), lambda: slider),
        "film": (at, lambda: film(snapshots, model, text, max_len)),
        "snapshot_chart": (at, lambda: training_chart(snapshots.decodings(model, text, max_len), 0, model)),
    }


def film(snapshots: Snapshots, model: str, text: str, max_len: int | None) -> dict:
    """Every snapshot's decoding of the source, as the page draws it: the step it was taken at, its line of
    measures, its output, and its attention (lab.attention.payload), or why it has none."""
    decoded = snapshots.decodings(model, text, max_len)
    tokenizer = snapshots.registry.entries[model].pipeline.tokenizer  # every snapshot shares the model's tokenizer
    frames = [
        {
            "step": d.snapshot.step,
            "label": f"Snapshot {i + 1} of {len(decoded)}: step {d.snapshot.step:,}",
            "info": describe(decoded, i, model),
            "output": d.output_text or "",
            "data": payload.full(d.session, tokenizer, model) if d.session is not None else None,
            "error": d.error,
        }
        for i, d in enumerate(decoded)
    ]
    return {"op": "film", "key": "|".join(map(str, (model, text, max_len))), "snapshots": frames}


def describe(decoded: list[SnapshotDecoding], i: int, model: str) -> str:
    """One line on the shown snapshot: its step and what was measured there, or why it cannot be shown."""
    shown = decoded[i]
    is_model = shown.snapshot.is_checkpoint
    head = f"**Step {shown.snapshot.step:,}**" + (f" (the {model} model the other tabs show)" if is_model else "")
    if shown.error:
        return f"{head}: {shown.error}"
    metrics = shown.snapshot.metrics
    parts = [head, "it writes nothing: `</s>` comes first"] if shown.output_text == "" else [head]
    if shown.loss is not None:
        parts.append(f"validation loss {shown.loss:.3f}")
    if metrics.get("exact_match") is not None:
        parts.append(f"validation exact match {metrics['exact_match']:.1%}")
    if metrics.get("bleu") is not None:
        parts.append(f"validation BLEU {metrics['bleu']:.2f}")
    if shown.alignment is not None:
        parts.append(f"best cross head's alignment on this source {shown.alignment:.0%}")
    return " · ".join(parts)


def _unavailable(model: str, message: str) -> dict:
    slider = {"value": 0, "maximum": 1, "interactive": False, "label": "Snapshot"}
    return {
        "snapshot": ((model, 0), lambda: slider),
        "film": (("none", message), lambda: {"op": "film", "key": "", "snapshots": [], "message": message}),
        "snapshot_chart": (None, lambda: None),
    }
