"""What the Training tab shows, and the /training API's answer: a model's snapshots decoding the user's source."""

from __future__ import annotations

from ..attention.drawing import Drawing, Look
from ..attention.figures import empty_figure
from ..checks import InputError
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


def chosen(decoded: list[SnapshotDecoding], index: object) -> int:
    """The slider's snapshot, within range; none yet: the first (step 0), where playing starts."""
    try:
        wanted = int(index)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return 0
    return max(0, min(wanted, len(decoded) - 1))


def outputs(snapshots: Snapshots, model: str, text: str, max_len: int | None, index: object, look: Look) -> dict:
    """The Training tab's outputs as name -> (key, how to make it)."""
    try:
        decoded = snapshots.decodings(model, text, max_len)
    except InputError as err:
        return _unavailable(model, str(err))
    n, i = len(decoded), chosen(decoded, index)
    shown = decoded[i]
    label = f"Snapshot {i + 1} of {n}: step {shown.snapshot.step:,}"
    at = (model, text, max_len, i)
    slider = {"value": i, "maximum": max(n - 1, 1), "interactive": n > 1, "label": label}
    info = describe(decoded, i, model)
    return {
        "snapshot": ((model, n, i), lambda: slider),
        "snapshot_info": (info, lambda: info),
        "snapshot_output": ((*at, shown.output_text), lambda: shown.output_text or ""),
        # Drawn once per source: a move of the slider moves its mark in the browser (lab/assets/page.js)
        "snapshot_chart": (at[:3], lambda: training_chart(decoded, i, model)),
        "snapshot_view": ((*at, look), lambda: view(snapshots, model, shown, look)),
    }


def view(snapshots: Snapshots, model: str, decoded: SnapshotDecoding, look: Look):
    """The snapshot's cross-attention over its whole decoding, drawn as the Cross-attention tab draws it."""
    if decoded.session is None:
        return empty_figure(decoded.error)
    tokenizer = snapshots.registry.entries[model].pipeline.tokenizer  # every snapshot shares the model's tokenizer
    return Drawing.of(decoded.session, tokenizer, look).view("cross", len(decoded.session.steps))


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
        "snapshot": ((model, 0, 0), lambda: slider),
        "snapshot_info": (message, lambda: message),
        "snapshot_output": (("", message), lambda: ""),
        "snapshot_view": (("none", message), lambda: empty_figure(message)),
        "snapshot_chart": (None, lambda: None),
    }
